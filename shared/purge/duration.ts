import { fail } from "../errors.ts";

const unitSeconds = new Map([
  ["d", 86_400],
  ["h", 3_600],
  ["m", 60],
  ["s", 1],
]);
const MAX_SECONDS = 100 * 365 * 86_400;
/** Longer than any sensible duration; checked before the pattern, which recurses per part. */
const MAX_DURATION_LENGTH = 64;

/**
 * Parses a duration such as `720h`, `90m`, `30d` or `1h30m` into seconds: one or more
 * number-and-unit parts, units `d`, `h`, `m`, `s`. Zero, negative or absurd (over 100 years)
 * durations are refused with INVALID_DURATION.
 */
export function parseDuration(text: string, field = "body.older_than"): number {
  if (text.length > MAX_DURATION_LENGTH || !/^(\d+(\.\d+)?[dhms])+$/.test(text)) {
    const shown = text.length > MAX_DURATION_LENGTH ? `${text.slice(0, MAX_DURATION_LENGTH)}…` : text;
    fail(
      "INVALID_DURATION",
      `${field}: '${shown}' is not a duration; use forms like 720h, 90m, 30d or 1h30m`,
    );
  }
  let seconds = 0;
  for (const [, amount, unit = ""] of text.matchAll(/(\d+(?:\.\d+)?)([dhms])/g)) {
    const perUnit = unitSeconds.get(unit);
    if (perUnit === undefined) throw new Error(`the duration pattern let through the unit '${unit}'`);
    seconds += Number(amount) * perUnit;
  }
  if (seconds <= 0 || seconds > MAX_SECONDS)
    fail("INVALID_DURATION", `${field}: must be more than 0 and at most 100 years`);
  return seconds;
}
