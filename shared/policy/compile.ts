import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { wasmFromBundle } from "./bundle.ts";

/** A compiled policy: the wasm module and the entrypoints built into it (`allow`, maybe `reason`). */
export interface Compiled {
  ok: true;
  wasm: Buffer;
  /** Full entrypoint paths, `<package path>/allow` first, then `<package path>/reason` if defined. */
  entrypoints: string[];
}

/**
 * A source that did not compile. `permanent` errors are the compiler's verdict on the source and
 * are cached with it; the others (no opa binary, a killed or timed-out build) say nothing about
 * the source, so they are never cached and the next call tries again.
 */
export interface CompileFailure {
  ok: false;
  error: string;
  permanent: boolean;
}

export type CompileOutcome = Compiled | CompileFailure;

/** Compiles one Rego source. Never throws: every failure is an outcome. */
export type CompileFn = (source: Buffer) => Promise<CompileOutcome>;

/** The pinned opa that `npm run emulators` builds (see emulators/README.md). */
export const PINNED_OPA_PATH = path.resolve(import.meta.dirname, "../../.tools/bin/opa");

/**
 * The pinned opa when it has been built; otherwise an `opa` on PATH. Any OPA v1 compiles the
 * same Rego to an equivalent module, so a cache entry made by either serves both.
 */
export const DEFAULT_OPA_PATH = existsSync(PINNED_OPA_PATH) ? PINNED_OPA_PATH : "opa";

/** Fixed file name inside the temporary folder, so compiler messages read `policy.rego:3: ...`. */
const FILE = "policy.rego";
const MAX_ERROR_CHARS = 2000;

/**
 * The real compiler: `opa parse` to learn the package and whether `reason` exists (opa build
 * refuses an entrypoint that names no rule), then `opa build -t wasm` for `allow` and `reason`,
 * in a fresh temporary folder (a few tens of ms and ~30 MB for a typical policy). At most
 * `concurrency` compilations run at once, so a repo that adds many policies at once does not
 * take every core from the requests being served.
 */
export function opaCompiler(opts: { opaPath?: string; timeoutMs?: number; concurrency?: number } = {}) {
  const opa = opts.opaPath ?? DEFAULT_OPA_PATH;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const gate = semaphore(opts.concurrency ?? 2);
  const compile: CompileFn = (source) => gate(() => compileOnce(opa, timeoutMs, source));
  return compile;
}

async function compileOnce(opa: string, timeoutMs: number, source: Buffer): Promise<CompileOutcome> {
  const dir = await mkdtemp(path.join(tmpdir(), "quire-opa-"));
  try {
    await writeFile(path.join(dir, FILE), source);
    const parsed = await run(opa, ["parse", "--format", "json", FILE], dir, timeoutMs);
    if (!parsed.ok) return parsed;
    const shape = moduleShape(parsed.stdout);
    if (!shape.ok) return shape;
    const entrypoints = [`${shape.pkg}/allow`, ...(shape.hasReason ? [`${shape.pkg}/reason`] : [])];
    const args = [
      "build",
      "-t",
      "wasm",
      ...entrypoints.flatMap((e) => ["-e", e]),
      "-o",
      "bundle.tar.gz",
      FILE,
    ];
    const built = await run(opa, args, dir, timeoutMs);
    if (!built.ok) return built;
    const wasm = await wasmFromBundle(path.join(dir, "bundle.tar.gz"));
    if (!wasm) return { ok: false, error: "opa build produced no policy.wasm", permanent: false };
    return { ok: true, wasm, entrypoints };
  } catch (err) {
    return { ok: false, error: `compiling failed: ${(err as Error).message}`, permanent: false };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type Shape = { ok: true; pkg: string; hasReason: boolean } | CompileFailure;

/** The package path (`a/b/c`) and top-level rule names of `opa parse --format json` output. */
function moduleShape(json: string): Shape {
  const ast = JSON.parse(json) as {
    package?: { path?: { value: unknown }[] };
    rules?: { head?: { name?: string; ref?: { value: unknown }[] } }[];
  };
  const segments = (ast.package?.path ?? []).slice(1).map((t) => String(t.value));
  // Only single-term heads define `allow` itself; `allow.x := ...` would define a nested object.
  const names = new Set(
    (ast.rules ?? []).map((r) =>
      r.head?.ref ? (r.head.ref.length === 1 ? r.head.ref[0]?.value : "") : r.head?.name,
    ),
  );
  if (!names.has("allow")) {
    return { ok: false, error: `${FILE}: the policy does not define \`allow\``, permanent: true };
  }
  return { ok: true, pkg: segments.join("/"), hasReason: names.has("reason") };
}

type RunResult = { ok: true; stdout: string } | CompileFailure;

/** Runs opa; a non-zero exit is the compiler rejecting the source (permanent), anything else is not. */
function run(opa: string, args: string[], cwd: string, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(opa, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const missing = e.code === "ENOENT" || e.code === "EACCES";
      resolve({
        ok: false,
        permanent: false,
        error: missing
          ? `the opa binary is not available on this server (${opa}: ${e.code}); run \`npm run emulators\``
          : `could not run opa: ${e.message}`,
      });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString("utf8");
      if (code === 0) return resolve({ ok: true, stdout });
      if (timedOut)
        return resolve({
          ok: false,
          permanent: false,
          error: `opa ${args[0]} timed out after ${timeoutMs} ms`,
        });
      if (signal)
        return resolve({ ok: false, permanent: false, error: `opa ${args[0]} was killed (${signal})` });
      resolve({
        ok: false,
        permanent: true,
        error: compilerMessage(stdout, Buffer.concat(err).toString("utf8")),
      });
    });
  });
}

/** opa parse reports errors as JSON on stderr; opa build as `error: ...` text on stdout. */
function compilerMessage(stdout: string, stderr: string): string {
  const text = `${stderr}\n${stdout}`.trim();
  let message = text;
  try {
    const parsed = JSON.parse(stderr) as {
      errors?: { message: string; code: string; location?: { file: string; row: number } }[];
    };
    if (parsed.errors?.length) {
      message = parsed.errors
        .map((e) => `${e.location ? `${e.location.file}:${e.location.row}: ` : ""}${e.code}: ${e.message}`)
        .join("; ");
    }
  } catch {
    // "error: 1 error occurred: policy.rego:5: ..." reads better without its preamble.
    message = text.replace(/^error: /, "").replace(/^1 error occurred: /, "");
  }
  return message.length > MAX_ERROR_CHARS ? `${message.slice(0, MAX_ERROR_CHARS)}...` : message;
}

/** Runs at most `n` tasks at a time, the rest in arrival order. */
function semaphore(n: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A finishing task hands its slot straight to the next waiter, so no newcomer can slip in.
    if (active < n) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
