import { readFileSync } from "node:fs";

const st = () => {
  const t = readFileSync("/proc/self/status", "utf8");
  const k = (f) => Number(new RegExp(`^${f}:\\s+(\\d+)`, "m").exec(t)[1]) / 1024;
  return k("VmRSS");
};
const u = (m) => (m.startsWith(".") ? new URL(m, "file:///work/wt/memory/").href : m);
for (const m of ["pg", "pino", "zod", "./shared/config.ts", "./shared/http/dispatch.ts"]) await import(u(m));
globalThis.gc();
globalThis.gc();
const r0 = st(),
  h0 = process.memoryUsage().heapUsed;
await import(u(process.argv[2]));
globalThis.gc();
globalThis.gc();
console.log(
  process.argv[2].padEnd(40),
  `rss +${(st() - r0).toFixed(1)} heapUsed +${((process.memoryUsage().heapUsed - h0) / 1048576).toFixed(1)}`,
);
