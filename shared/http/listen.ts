import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Listens on `host` (the HOST setting, 127.0.0.1 unless widened) and `port` (0: any free one),
 * and answers the URL this machine reaches the server at. An unspecified address (0.0.0.0, ::)
 * is reached over loopback; any other address is reached at itself.
 */
export async function listenOn(
  server: Server,
  host: string,
  port: number,
): Promise<{ url: string; port: number }> {
  server.listen(port, host);
  await once(server, "listening");
  return reachedAt(server);
}

/** The URL this machine reaches a listening `server` at (see `listenOn`), and its port. */
export function reachedAt(server: Server): { url: string; port: number } {
  const { address, port } = server.address() as AddressInfo;
  const reach = address === "0.0.0.0" || address === "::" ? "127.0.0.1" : address;
  return { url: `http://${reach.includes(":") ? `[${reach}]` : reach}:${port}`, port };
}
