import { ConfigError } from "../shared/config.ts";
import { startServer } from "./server.ts";

/** `npm start`: run Quire locally until SIGINT or SIGTERM. */
try {
  const running = await startServer();
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
