import { readFileSync } from "node:fs";
import net from "node:net";

/** Where `freePort` looks: above the well-known and registered ports most services use. */
const LOWEST = 20_000;

/**
 * The lowest port of the kernel's ephemeral range, where every outgoing connection and every
 * `listen(0)` gets its port.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    if (low > 0) return low;
  } catch {
    // Not Linux: the IANA range most other systems use.
  }
  return 49_152;
}

/** Whether a listener can take `port` on 127.0.0.1 now (0: any, the kernel's choice). */
function listenOnce(port: number): Promise<number | undefined> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const taken = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(taken));
    });
  });
}

/**
 * A TCP port that was free a moment ago on 127.0.0.1, for a server that starts later (often a
 * child process, seconds later). Chosen at random below the kernel's ephemeral range, so no
 * outgoing connection and no `listen(0)` of another test file can take it meanwhile; only another
 * `freePort` could, by drawing the same one of some ten thousand ports.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; low > LOWEST && attempt < 20; attempt++) {
    const port = await listenOnce(LOWEST + Math.floor(Math.random() * (low - LOWEST)));
    if (port !== undefined) return port;
  }
  const port = await listenOnce(0);
  if (port === undefined) throw new Error("no free port on 127.0.0.1");
  return port;
}

/**
 * `start` on a free port, again on another one (at most three times) when the port was taken
 * between `freePort` and the listen (by another `freePort` that drew the same port).
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (err) {
      const taken = err instanceof Error && /already in use|EADDRINUSE/.test(err.message);
      if (!taken || attempt >= 3) throw err;
    }
  }
}
