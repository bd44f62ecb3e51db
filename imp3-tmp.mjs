import { readFileSync } from "node:fs";

const st = () => {
  const t = readFileSync("/proc/self/status", "utf8");
  const k = (f) => Number(new RegExp(`^${f}:\\s+(\\d+)`, "m").exec(t)[1]) / 1024;
  return k("VmRSS");
};
const u = (m) => (m.startsWith(".") ? new URL(m, "file:///work/wt/memory/").href : m);
const [pre, ...rest] = process.argv.slice(2);
for (const m of pre.split(",")) await import(u(m));
for (const m of rest) {
  globalThis.gc();
  globalThis.gc();
  const r0 = st(),
    h0 = process.memoryUsage().heapUsed;
  for (const x of m.split(",")) await import(u(x));
  globalThis.gc();
  globalThis.gc();
  console.log(
    m.padEnd(40),
    `rss +${(st() - r0).toFixed(1)} heapUsed +${((process.memoryUsage().heapUsed - h0) / 1048576).toFixed(1)} total heapUsed ${(process.memoryUsage().heapUsed / 1048576).toFixed(1)} rss ${st().toFixed(1)}`,
  );
}
