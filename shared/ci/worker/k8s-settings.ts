import { readFileSync } from "node:fs";
import { isLoopbackHost } from "../../config.ts";

/**
 * The start-up checks of a Kubernetes configuration, apart from the client library (which is
 * large, and loaded only when the first claim needs it): throws for a URL or CA file that cannot
 * work, so a wrong setting stops the process instead of failing every claim with 503.
 */
export function checkKubernetesServer(server: string, caFile: string | undefined): void {
  const url = new URL(server);
  // The scheduler sends its own bearer token on every call: never in clear text over a network.
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname))
    throw new Error(`SVC_CI_K8S_API_URL must be https unless it is a loopback address, got ${server}`);
  // Read once; the library itself re-reads the file per request, which keeps a rotated CA working
  // without a restart.
  if (caFile) readFileSync(caFile);
}
