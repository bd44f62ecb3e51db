import nodeHttp, { type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import { readBody } from "../shared/http/node.ts";

/** A JSON body declared larger than this is read by Quire before the framework's parsers. */
const READ_AHEAD_ABOVE_BYTES = 1_048_576;
/** The framework's own limit (its body parsers read up to 1024 MiB); Quire's is checked later. */
const FRAMEWORK_LIMIT_BYTES = 1024 * 1024 * 1024;

const isLargeJson = (req: IncomingMessage) =>
  Number(req.headers["content-length"] ?? 0) > READ_AHEAD_ABOVE_BYTES &&
  /^application\/json\s*(;|$)/i.test(String(req.headers["content-type"] ?? ""));

/** The framework makes its server with its Express app as the one argument (its server.js). */
const isExpressApp = (args: unknown[]): args is [RequestListener] =>
  args.length === 1 && typeof args[0] === "function" && "handle" in args[0] && "use" in args[0];

let installed = false;

/**
 * The Functions Framework's Express body parsers hold a JSON body three times (bytes, text,
 * parsed) before Quire's handler runs: a 30 MiB commit raised the `repos` function's peak by 5x
 * the body (docs/benchmarks.md, "The deployed functions"). They offer no way to skip a route, but
 * they skip a request whose body has been read. So the framework's server gets a listener that
 * first reads a large JSON body into one buffer (`req.rawBody`, as the framework would set it) and
 * leaves `req.body` unset; Quire then parses it from the bytes (shared/http/large-json.ts).
 * Only a server made for an Express app is changed: any other server of the process (a test's,
 * say) gets its bodies as sent. Call before the framework creates its server (at module load: the
 * framework loads the function's module first).
 */
export function readLargeJsonBodiesFirst(): void {
  if (installed) return;
  installed = true;
  const createServer = nodeHttp.createServer as (...args: unknown[]) => nodeHttp.Server;
  const wrapped = (...args: unknown[]) => {
    if (!isExpressApp(args)) return createServer(...args);
    const [app] = args;
    return createServer(async (req: IncomingMessage, res: ServerResponse) => {
      if (isLargeJson(req)) {
        try {
          (req as IncomingMessage & { rawBody?: Buffer }).rawBody = await readBody(
            req,
            FRAMEWORK_LIMIT_BYTES,
          );
        } catch {
          res.destroy(); // the client went away mid-body: nothing to answer
          return;
        }
      }
      app(req, res);
    });
  };
  nodeHttp.createServer = wrapped as typeof nodeHttp.createServer;
}
