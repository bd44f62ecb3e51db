import { createHash } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import type { Logger } from "../log.ts";
import type { CompileFn } from "./compile.ts";
import { Lru } from "./lru.ts";

/**
 * A compiled `WebAssembly.Module`. The project's `lib` has no WebAssembly declarations (they live
 * in lib "dom"), so this file declares the one call it makes instead of widening the whole lib.
 */
export type WasmModule = object & { readonly __brand?: "WebAssembly.Module" };
const wasmApi = (
  globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }
).WebAssembly;

/** A policy ready to run, or the reason it cannot run. */
export type PolicyModule =
  | { ok: true; module: WasmModule; allow: string; reason: string | null }
  | { ok: false; error: string };

const policy_module_select = `
  SELECT wasm, entrypoints, error FROM policy_modules WHERE source_sha256 = $1`;
const policy_module_insert = `
  INSERT INTO policy_modules (source_sha256, wasm, entrypoints, error)
  VALUES ($1, $2, $3::text[], $4)
  ON CONFLICT (source_sha256) DO NOTHING`;

interface Row {
  wasm: Buffer | null;
  entrypoints: string[];
  error: string | null;
}

/**
 * Compiled policies in two tiers. The table `policy_modules`, keyed by the source's SHA-256, is
 * shared by every instance, so each policy version is compiled once in the whole deployment
 * (two instances meeting a new version at the same moment may both compile it; the second
 * insert does nothing and both then use the stored row). In front of it, an LRU of compiled
 * `WebAssembly.Module`s per process, so a warm evaluation touches neither the database nor the
 * wasm compiler. Compiler errors are stored like modules; failures that say nothing about the
 * source (no opa binary, a killed build) are stored nowhere, so the next call tries again.
 */
export class ModuleCache {
  readonly #compile: CompileFn;
  readonly #log: Logger | undefined;
  readonly #modules: Lru<string, PolicyModule>;
  readonly #pending = new Map<string, Promise<PolicyModule>>();

  constructor(opts: { compile: CompileFn; log?: Logger | undefined; size?: number }) {
    this.#compile = opts.compile;
    this.#log = opts.log;
    this.#modules = new Lru(opts.size ?? 128);
  }

  /** The module for `source` (whose SHA-256 is `sha256`): from memory, the table, or the compiler. */
  get(db: Queryable, sha256: Buffer, source: Buffer): Promise<PolicyModule> {
    const key = sha256.toString("hex");
    const hit = this.#modules.get(key);
    if (hit) return Promise.resolve(hit);
    // Concurrent requests for one version share one lookup and at most one compilation.
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = this.#load(db, key, sha256, source).finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    return pending;
  }

  async #load(db: Queryable, key: string, sha256: Buffer, source: Buffer): Promise<PolicyModule> {
    let row = await this.#select(db, sha256);
    if (!row) {
      // The key is trusted into a table every instance reads: check it really is this source's.
      if (!createHash("sha256").update(source).digest().equals(sha256)) {
        throw new Error(`policy source does not match its sha256 ${key}`);
      }
      const started = performance.now();
      const outcome = await this.#compile(source);
      const ms = Math.round(performance.now() - started);
      if (!outcome.ok && !outcome.permanent) {
        this.#log?.error({ policy_sha256: key, error: outcome.error }, "policy compiler unavailable");
        return { ok: false, error: outcome.error };
      }
      this.#log?.info({ policy_sha256: key, ms, compiled: outcome.ok }, "policy compiled");
      await db.query(policy_module_insert, [
        sha256,
        outcome.ok ? outcome.wasm : null,
        outcome.ok ? outcome.entrypoints : [],
        outcome.ok ? null : outcome.error,
      ]);
      row = (await this.#select(db, sha256)) ?? {
        wasm: outcome.ok ? outcome.wasm : null,
        entrypoints: outcome.ok ? outcome.entrypoints : [],
        error: outcome.ok ? null : outcome.error,
      };
    }
    const module = await toModule(row);
    // A wasm that no longer loads (say, a module built by an opa whose ABI this SDK lacks) stays
    // out of memory so that a fix in the table is picked up; it still fails closed meanwhile.
    if (module.ok || row.error !== null) this.#modules.set(key, module);
    return module;
  }

  async #select(db: Queryable, sha256: Buffer): Promise<Row | null> {
    const { rows } = await db.query(policy_module_select, [sha256]);
    return (rows[0] as Row | undefined) ?? null;
  }
}

async function toModule(row: Row): Promise<PolicyModule> {
  if (row.error !== null || row.wasm === null) return { ok: false, error: row.error ?? "no module" };
  const [allow, reason] = row.entrypoints;
  if (!allow) return { ok: false, error: "the compiled module has no entrypoints" };
  try {
    return { ok: true, module: await wasmApi.compile(row.wasm), allow, reason: reason ?? null };
  } catch (err) {
    return { ok: false, error: `the compiled module does not load: ${(err as Error).message}` };
  }
}
