import type { CheckLog } from "./log.ts";
import type { LiveLog } from "./types.ts";

/**
 * The log of a running check, streamed (docs/ci-worker.md, "Logs"): every LIVE_UPLOAD_INTERVAL_MS,
 * when the log has grown, the whole log so far is uploaded again (the log store replaces objects,
 * it does not append). What is uploaded is what CheckLog kept, so it is already scrubbed and capped
 * exactly as the final log is; a secret split over two writes is held back until it is whole.
 */

export const LIVE_UPLOAD_INTERVAL_MS = 2000;
/** Past this size the log so far is sent less often, so a chatty check does not resend megabytes every 2 s. */
const LARGE_LOG_BYTES = 1024 * 1024;
const LARGE_LOG_INTERVAL_MS = 10_000;

export interface LiveUpload {
  /** Stops the uploads and waits for one in flight, so the final log is never overtaken by it. */
  stop(): Promise<void>;
}

export function streamLog(log: CheckLog, live: LiveLog, intervalMs = LIVE_UPLOAD_INTERVAL_MS): LiveUpload {
  let sent = 0;
  let sentAt = 0;
  let inFlight: Promise<void> | undefined;
  const timer = setInterval(() => {
    const now = performance.now();
    if (inFlight || log.size === sent) return;
    if (log.size > LARGE_LOG_BYTES && now - sentAt < LARGE_LOG_INTERVAL_MS) return;
    const soFar = log.toBuffer();
    sent = soFar.length;
    sentAt = now;
    // A lost partial upload is only a delay: the next one, or the final log, carries its bytes.
    inFlight = live
      .upload(soFar)
      .catch(() => {})
      .finally(() => {
        inFlight = undefined;
      });
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
    },
  };
}
