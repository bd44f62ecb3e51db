import { afterEach, describe, expect, it } from "vitest";
import { type StepResult, WakeLoop } from "../../shared/events/wake.ts";
import { createLogger } from "../../shared/log.ts";
import { freshDatabase } from "../support/app.ts";

/*
 * The wake loop's spacing (shared/events/wake.ts, `minStepIntervalMs`): woken by a burst, a loop
 * that may answer late steps once per interval, not once per wake-up; a step that found more runs
 * the next at once.
 */

const log = createLogger({ format: "json", level: "silent" });
let loop: WakeLoop | undefined;
afterEach(() => loop?.close());

/** A loop whose steps are recorded; each answers the next of `results` ("idle" once they run out). */
async function startLoop(minStepIntervalMs: number, results: StepResult[] = []) {
  const steps: number[] = [];
  loop = new WakeLoop({
    databaseUrl: await freshDatabase({ empty: true }),
    name: "wake-test",
    log,
    sweepMs: 60_000,
    minStepIntervalMs,
    step: async () => {
      steps.push(performance.now());
      return results.shift() ?? "idle";
    },
  });
  await loop.start();
  return steps;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

describe("a wake loop with a least step interval", () => {
  it("steps once per interval through a burst of wake-ups, and again after the last", async () => {
    const steps = await startLoop(150);
    await sleep(20); // the step of the connection's own wake-up
    for (let i = 0; i < 30; i++) {
      loop?.wake();
      await sleep(10);
    }
    await sleep(400);
    // 20 ms + 300 ms of wake-ups + 400 ms: at most one step per 150 ms, and a last one after the burst.
    expect(steps.length).toBeGreaterThanOrEqual(3);
    expect(steps.length).toBeLessThanOrEqual(6);
    // Each step starts 150 ms after the one before; the recorded times lag the starts by microseconds.
    for (const gap of gaps(steps)) expect(gap).toBeGreaterThanOrEqual(149.9);
  });

  it("runs the next step at once when a step found more", async () => {
    const steps = await startLoop(200, ["more", "more", "more"]);
    await sleep(100);
    expect(steps).toHaveLength(4);
    for (const gap of gaps(steps)) expect(gap).toBeLessThan(100);
  });

  it("without an interval, steps as often as it is woken", async () => {
    const steps = await startLoop(0);
    await sleep(20);
    for (let i = 0; i < 10; i++) {
      loop?.wake();
      await sleep(15);
    }
    expect(steps.length).toBeGreaterThanOrEqual(8);
  });
});

describe("closing a wake loop", () => {
  /** Whether `close` resolved within `ms`. */
  const closesWithin = async (ms: number) => {
    const closing = loop?.close().then(() => "closed");
    return Promise.race([closing, sleep(ms).then(() => "still waiting")]);
  };

  // Also what keeps a test that swaps vitest's fake timers in and out under a running app (the CI
  // timers' test) from stranding the app's close on a fake timer nothing will ever fire.
  it("ends a spacing at once rather than waiting it out", async () => {
    const steps = await startLoop(60_000);
    await sleep(20);
    loop?.wake();
    await sleep(20); // the wake-up now waits out the minute's spacing
    expect(await closesWithin(1000)).toBe("closed");
    expect(steps).toHaveLength(1);
  });
});
