import { ConfigError } from "../shared/config.ts";
import { StartupError } from "../shared/startup.ts";

/**
 * Runs a long-lived server until SIGINT or SIGTERM (what Cloud Run and a terminal send), then
 * closes it and exits 0. A configuration error exits 2 with its message, naming the variable; a
 * port or data folder another process holds exits 1 with one line naming it and the fix.
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
    if (err instanceof StartupError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}
