import { writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

/**
 * Loaded into the server process by the bench (`node --import ./bench/loop-probe.ts`, with
 * QUIRE_LOOP_PROBE_FILE set; see startQuire's `loopProbe`). It samples the event loop's delay
 * every few milliseconds; on SIGUSR2 it writes the longest delay (the longest time the loop was
 * held by one piece of synchronous work) and the p99 since the previous signal to that file, with
 * a sequence number, and starts over. Not part of Quire: nothing in functions/ or shared/ loads it.
 */
const file = process.env["QUIRE_LOOP_PROBE_FILE"];
if (file) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let seq = 0;
  process.on("SIGUSR2", () => {
    seq++;
    const ms = (ns: number) => ns / 1e6;
    const report = { seq, maxMs: ms(delay.max), p99Ms: ms(delay.percentile(99)), samples: delay.count };
    writeFileSync(file, JSON.stringify(report));
    delay.reset();
  });
}
