import { startEmbeddedPostgres } from "../../shared/db/embedded.ts";

/**
 * A throw-away PostgreSQL cluster for one `npm test`, run as its own process: the embedded
 * package's exit hook would otherwise end the test runner with code 0 whatever the results.
 * Usage: pg-cluster.ts <data dir> <port>. Prints `ready <url>`, stops when stdin closes. A
 * scratch cluster: commits do not wait for the disk (the data is thrown away after the run).
 */
const [dataDir, port] = process.argv.slice(2);
const server = await startEmbeddedPostgres({
  dataDir: dataDir!,
  port: Number(port),
  persistent: false,
  scratch: true,
});
process.stdout.write(`ready ${server.url}\n`);
process.stdin.resume();
process.stdin.on("end", async () => {
  await server.stop();
  process.exit(0);
});
