import path from "node:path";
import { freshDatabase } from "../support/app.ts";
import { docBlock, replaceAll, startShell } from "../support/doc-blocks.ts";

type Shell = Awaited<ReturnType<typeof startShell>>;

/**
 * A documented server block (`npm start …`) run as written on `address` (`127.0.0.1:<port>`), on a
 * fresh database of the test cluster, with its blobs and CI logs under `scratch`.
 */
export async function startDocServer(lines: string, address: string, scratch: string): Promise<Shell> {
  return startShell(lines, "quire is listening", {
    env: {
      PORT: address.split(":")[1] ?? "",
      DATABASE_URL: await freshDatabase(),
      SVC_BLOB_LOCAL_DIR: path.join(scratch, "blobs"),
      SVC_CI_LOG_DIR: path.join(scratch, "logs"),
    },
  });
}

/** docs/ci-worker.md's registry block on `address` instead of port 5000, once it answers `/v2/`. */
export function startDocRegistry(address: string): Promise<Shell> {
  return startShell(
    replaceAll(docBlock("docs/ci-worker.md", "ci-image/registry"), {
      "-port 5000": `-port ${address.split(":")[1]}`,
    }),
    () =>
      fetch(`http://${address}/v2/`).then(
        (r) => r.ok,
        () => false,
      ),
  );
}
