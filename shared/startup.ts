import { readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";

/**
 * Raised when the server cannot start for a reason outside its configuration's validity: a port
 * or a data folder another process holds. Its message is one line naming the cause and the fix;
 * `npm start` prints it and exits 1 (functions/run.ts), never a stack.
 */
export class StartupError extends Error {}

/** Whether something else already listens on `port` (a bind attempt, closed at once). */
export async function portInUse(port: number, host?: string): Promise<boolean> {
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen({ port, host, exclusive: true }, resolve);
    });
    return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") return true;
    throw err;
  } finally {
    probe.close();
  }
}

/** The refusal for a taken HTTP port, in the words of the settings that change it. */
export function httpPortTaken(port: number): StartupError {
  return new StartupError(
    `quire: port ${port} is already in use by another process (another 'npm start'?): stop it, or set PORT to a free port (PORT=8081 npm start)`,
  );
}

/** Listens on `port`, turning EADDRINUSE into a StartupError that names PORT. */
export async function listenOrExplain(server: net.Server, port: number, host?: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) =>
      reject(err.code === "EADDRINUSE" ? httpPortTaken(port) : err);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

/** True when process `pid` exists (EPERM: it exists but belongs to another user, as postgres does). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The pid of a PostgreSQL that still runs on cluster `clusterDir`, from the first line of its
 * `postmaster.pid`; undefined when there is no such file or its process is gone (a stale file,
 * which PostgreSQL itself replaces).
 */
export async function runningPostmaster(clusterDir: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(clusterDir, "postmaster.pid"), "utf8");
  } catch {
    return undefined;
  }
  const pid = Number(text.split("\n")[0]);
  return Number.isSafeInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
}

/**
 * Refuses, before starting embedded PostgreSQL, what would make it die without a word: its data
 * folder in use by another Quire's cluster, or its port taken by another process.
 */
export async function checkEmbeddedPostgresFree(opts: {
  dataDir: string;
  clusterDir: string;
  port: number;
}): Promise<void> {
  const pid = await runningPostmaster(opts.clusterDir);
  if (pid !== undefined)
    throw new StartupError(
      `quire: the data folder ${path.resolve(opts.dataDir)} is in use by another Quire (its PostgreSQL runs as pid ${pid}): stop that 'npm start' first, or set SVC_DATA_DIR to another folder`,
    );
  if (await portInUse(opts.port, "127.0.0.1"))
    throw new StartupError(
      `quire: port ${opts.port} for the embedded PostgreSQL is already in use by another process (another Quire's database?): stop it, or set SVC_EMBEDDED_PG_PORT to a free port`,
    );
}
