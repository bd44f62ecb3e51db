import { runUntilSignalled } from "./run.ts";
import { startStreamService } from "./sse/service.ts";

/**
 * The event stream service's entry point (`node --import tsx functions/sse.ts`, or the bundle the
 * build makes of it): serves the SSE streams until SIGTERM (what Cloud Run sends before it stops
 * an instance) or SIGINT, then ends every stream with a last comment so clients reconnect, with
 * Last-Event-ID, to another instance.
 */
await runUntilSignalled(() => startStreamService());
