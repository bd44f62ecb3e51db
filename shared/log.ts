import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

export type { Logger };

/** Cloud Logging reads `severity`; pino's numeric levels map onto its names. */
const severityOf: Record<string, string> = {
  trace: "DEBUG",
  debug: "DEBUG",
  info: "INFO",
  warn: "WARNING",
  error: "ERROR",
  fatal: "CRITICAL",
};

/** Renders pino's JSON lines as `time LEVEL message key=value ...` for people reading a terminal. */
function textDestination(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line === "") continue;
        const { time, severity, message, ...fields } = JSON.parse(line) as Record<string, unknown>;
        const rest = Object.entries(fields)
          .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
          .join(" ");
        out.write(`${String(time)} ${String(severity).padEnd(7)} ${String(message ?? "")} ${rest}\n`);
      }
      done();
    },
  });
}

/** One JSON object per line that Cloud Logging understands (`severity`, `message`, fields), or readable text. */
export function createLogger(
  opts: { format: "json" | "text"; level: string },
  out: NodeJS.WritableStream = process.stdout,
): Logger {
  return pino(
    {
      level: opts.level,
      messageKey: "message",
      base: undefined,
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ severity: severityOf[label] ?? "DEFAULT" }) },
    },
    opts.format === "text" ? textDestination(out) : (out as Writable),
  );
}
