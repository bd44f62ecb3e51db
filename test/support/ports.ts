import net from "node:net";

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * `start` on a free port, again on another one (at most three times) when the port was taken
 * between `freePort` and the listen: another test file's outgoing connection can take it as its
 * own ephemeral port in that moment.
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
