import { runUntilSignalled } from "./run.ts";
import { startServer } from "./server.ts";

/** `npm start`: run Quire locally until SIGINT or SIGTERM. */
await runUntilSignalled(() => startServer());
