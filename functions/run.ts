import { ConfigError } from "../shared/config.ts";

/**
 * Runs a long-lived server until SIGINT or SIGTERM (what Cloud Run and a terminal send), then
 * closes it and exits 0. A configuration error exits 2 with its message, naming the variable.
 */
export async function runUntilSignalled(start: () => Promise<{ close(): Promise<void> }>): Promise<void> {
  try {
    const running = await start();
    const stop = async () => {
      await running.close();
      process.exit(0);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}
