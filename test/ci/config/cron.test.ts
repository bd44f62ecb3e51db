import { describe, expect, it } from "vitest";
import { cronMatches, cronProblem } from "../../../shared/ci/config/cron.ts";

describe("cronMatches (UTC, by the minute)", () => {
  it.each([
    // [expression, instant, fires]
    ["* * * * *", "2024-05-01T12:34:00Z", true],
    ["30 2 * * *", "2024-05-01T02:30:00Z", true],
    ["30 2 * * *", "2024-05-01T02:31:00Z", false],
    ["30 2 * * *", "2024-05-01T03:30:00Z", false],
    // seconds and milliseconds inside the minute do not matter
    ["30 2 * * *", "2024-05-01T02:30:59.999Z", true],
    ["30 2 * * *", "2024-05-01T02:29:59.999Z", false],
    // steps, ranges and lists across the hour
    ["*/15 * * * *", "2024-05-01T10:45:00Z", true],
    ["*/15 * * * *", "2024-05-01T11:00:00Z", true],
    ["*/15 * * * *", "2024-05-01T11:05:00Z", false],
    ["0 9-17 * * *", "2024-05-01T17:00:00Z", true],
    ["0 9-17 * * *", "2024-05-01T18:00:00Z", false],
    ["5,35 * * * *", "2024-05-01T23:35:00Z", true],
    // midnight, across days, months and the year
    ["0 0 * * *", "2024-05-02T00:00:00Z", true],
    ["59 23 * * *", "2024-12-31T23:59:00Z", true],
    ["0 0 1 1 *", "2025-01-01T00:00:00Z", true],
    ["0 0 1 1 *", "2025-01-02T00:00:00Z", false],
    // day of week (2024-05-06 is a Monday), names, 0 and 7 both Sunday
    ["0 8 * * 1", "2024-05-06T08:00:00Z", true],
    ["0 8 * * 1", "2024-05-07T08:00:00Z", false],
    ["0 8 * * MON-FRI", "2024-05-10T08:00:00Z", true],
    ["0 8 * * MON-FRI", "2024-05-11T08:00:00Z", false],
    ["0 8 * * 0", "2024-05-05T08:00:00Z", true],
    ["0 8 * * 7", "2024-05-05T08:00:00Z", true],
    // day of month and month; leap day
    ["0 12 29 2 *", "2024-02-29T12:00:00Z", true],
    ["0 12 15 JUN *", "2024-06-15T12:00:00Z", true],
    // last day of month and nth weekday
    ["0 0 L * *", "2024-02-29T00:00:00Z", true],
    ["0 0 L * *", "2024-02-28T00:00:00Z", false],
    ["0 0 * * 1#1", "2024-05-06T00:00:00Z", true],
    ["0 0 * * 1#1", "2024-05-13T00:00:00Z", false],
    ["0 0 * * 5L", "2024-05-31T00:00:00Z", true],
    ["0 0 * * 5L", "2024-05-24T00:00:00Z", false],
    ["10-50/20 * * * *", "2024-05-01T00:30:00Z", true],
    ["10-50/20 * * * *", "2024-05-01T00:20:00Z", false],
    // both day fields restricted: either one matches (classic cron)
    ["0 0 1 * 1", "2024-05-01T00:00:00Z", true],
    ["0 0 1 * 1", "2024-05-06T00:00:00Z", true],
    ["0 0 1 * 1", "2024-05-07T00:00:00Z", false],
  ])("%j at %s: %s", (expr, instant, expected) => {
    expect(cronMatches(expr, new Date(instant))).toBe(expected);
  });

  it("reads the instant in UTC, whatever the process time zone", () => {
    // 02:30 UTC is 04:30 in Central Europe in summer; the schedule is UTC
    expect(cronMatches("30 2 * * *", new Date("2024-05-01T04:30:00+02:00"))).toBe(true);
    expect(cronMatches("30 4 * * *", new Date("2024-05-01T04:30:00+02:00"))).toBe(false);
  });

  it("fires once per matching minute over a day", () => {
    const start = Date.parse("2024-05-01T00:00:00Z");
    const fired: string[] = [];
    for (let m = 0; m < 24 * 60; m++) {
      const at = new Date(start + m * 60_000);
      if (cronMatches("0 */6 * * *", at)) fired.push(at.toISOString().slice(11, 16));
    }
    expect(fired).toEqual(["00:00", "06:00", "12:00", "18:00"]);
  });

  it("throws on an expression cronProblem refuses", () => {
    expect(() => cronMatches("0 0 0 * * *", new Date())).toThrow(/exactly 5 fields/);
  });
});

describe("cronProblem", () => {
  it.each(["* * * * *", "0 3 * * *", " 0  3 * * * ", "*/5 1-3 1,15 JAN-MAR MON", "0 0 L * *", "? * * * *"])(
    "accepts %j",
    (expr) => {
      expect(cronProblem(expr)).toBeNull();
    },
  );

  it.each([
    ["", "exactly 5 fields"],
    ["* * * *", "exactly 5 fields (minute hour day-of-month month day-of-week), found 4"],
    ["0 * * * * *", "found 6"],
    ["0 0 * * * 2024", "found 6"],
    ["@daily", "'@daily' macros are not supported"],
    ["@hourly", "macros are not supported"],
    ["H * * * *", "'H' (hashed random values) is not supported"],
    ["H/5 * * * *", "'H'"],
    ["0 H(0-3) * * *", "'H'"],
    ["60 * * * *", "is not a valid cron expression"],
    ["* 24 * * *", "is not a valid cron expression"],
    ["0 0 0 * *", "is not a valid cron expression"],
    ["0 0 31 2 *", "is not a valid cron expression"],
    ["0 0 * 13 *", "is not a valid cron expression"],
    ["0 0 * * 8", "is not a valid cron expression"],
    ["a b c d e", "is not a valid cron expression"],
    [`0 ${"1,".repeat(200)}1 * * *`, "at most 200 characters"],
  ])("refuses %j: %s", (expr, fragment) => {
    expect(cronProblem(expr)).toContain(fragment);
  });

  it("accepts THU as a day name, not a hash", () => {
    expect(cronProblem("0 0 * * THU")).toBeNull();
  });
});
