import { type CronExpression, CronExpressionParser } from "cron-parser";

/**
 * `on.schedule[].cron` (docs/ci-config.md): exactly five fields (minute, hour, day of month,
 * month, day of week), evaluated in UTC. cron-parser also takes a sixth (seconds) field, `@`
 * macros and `H` (a random value per parse); those are refused here, because a schedule must
 * mean the same minutes on every instance that evaluates it.
 */
export const MAX_CRON_LENGTH = 200;

const MINUTE_MS = 60_000;

/** Why `expr` is not an acceptable schedule, or null when it is. */
export function cronProblem(expr: string): string | null {
  if (expr.length > MAX_CRON_LENGTH) return `must be at most ${MAX_CRON_LENGTH} characters`;
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields[0]?.startsWith("@"))
    return `'${fields[0]}' macros are not supported; write the 5 fields (for example '0 0 * * *' for daily)`;
  if (fields.length !== 5)
    return `must have exactly 5 fields (minute hour day-of-month month day-of-week), found ${fields.length}`;
  if (fields.some((f) => f.split(",").some((part) => /^H(?:$|[/(])/i.test(part))))
    return "'H' (hashed random values) is not supported; write the minute or hour";
  try {
    compile(expr);
  } catch (err) {
    return `is not a valid cron expression: ${(err as Error).message}`;
  }
  return null;
}

/**
 * Whether `expr` fires in the UTC minute containing `minute` (its seconds are ignored).
 * @throws Error when `expr` is not acceptable (see `cronProblem`).
 */
export function cronMatches(expr: string, minute: Date): boolean {
  const problem = cronProblem(expr);
  if (problem) throw new Error(`cron '${expr}' ${problem}`);
  const start = new Date(Math.floor(minute.getTime() / MINUTE_MS) * MINUTE_MS);
  return compile(expr).includesDate(start);
}

function compile(expr: string): CronExpression {
  return CronExpressionParser.parse(expr.trim(), { tz: "UTC" });
}
