import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { listenOrExplain } from "../startup.ts";

/**
 * Listens on `host` (the HOST setting, 127.0.0.1 unless widened) and `port` (0: any free one),
 * and answers the URL this machine reaches the server at. An unspecified address (0.0.0.0, ::)
 * is reached over loopback; any other address is reached at itself. A taken port is one line
 * naming PORT (shared/startup.ts), not an EADDRINUSE stack.
 */
export async function listenOn(
  server: Server,
  host: string,
  port: number,
): Promise<{ url: string; port: number }> {
  await listenOrExplain(server, port, host);
  const { address, port: bound } = server.address() as AddressInfo;
  const reach = address === "0.0.0.0" || address === "::" ? "127.0.0.1" : address;
  return { url: `http://${reach.includes(":") ? `[${reach}]` : reach}:${bound}`, port: bound };
}
