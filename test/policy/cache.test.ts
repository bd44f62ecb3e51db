import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CompileFn, opaCompiler } from "../../shared/policy/compile.ts";
import { createPolicyEngine, type PolicyEngine } from "../../shared/policy/engine.ts";
import { freshDatabase } from "../support/app.ts";
import { CI_MUST_PASS, input, PARSE_ERROR, REQUIRE_REVIEW, source } from "./fixtures.ts";

let pool: pg.Pool;
const engines: PolicyEngine[] = [];
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await freshDatabase(), max: 4 });
});
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
  await pool.end();
});

/** An engine (think: one instance of the service) whose real opa compiler counts its runs. */
function instance() {
  const real = opaCompiler();
  const counter = { compiles: 0 };
  const compile: CompileFn = (src) => {
    counter.compiles++;
    return real(src);
  };
  const engine = createPolicyEngine({ compile });
  engines.push(engine);
  return { engine, counter };
}

const row = async (sha256: Buffer) =>
  (
    await pool.query(
      "SELECT wasm IS NOT NULL AS has_wasm, entrypoints, error FROM policy_modules WHERE source_sha256 = $1",
      [sha256],
    )
  ).rows;

describe("compile cache", () => {
  it("compiles a policy version once: the second evaluation runs no opa", async () => {
    const { engine, counter } = instance();
    const p = source("require_review", REQUIRE_REVIEW);
    await engine.evaluate(pool, [p], input());
    expect(counter.compiles).toBe(1);
    expect(await engine.evaluate(pool, [p], input({ reviews: [] }))).toMatchObject([{ pass: false }]);
    expect(counter.compiles).toBe(1);
    expect(await row(p.sha256)).toEqual([
      {
        has_wasm: true,
        entrypoints: ["quire/policy/require_review/allow", "quire/policy/require_review/reason"],
        error: null,
      },
    ]);
  });

  it("another instance finds the compiled module in the database and compiles nothing", async () => {
    const first = instance();
    const p = source("ci_must_pass", CI_MUST_PASS);
    await first.engine.prepare(pool, [p]);
    expect(first.counter.compiles).toBe(1);
    const second = instance();
    expect(await second.engine.evaluate(pool, [p], input())).toEqual([
      { name: "ci_must_pass", pass: true, reason: "all checks passed" },
    ]);
    expect(second.counter.compiles).toBe(0);
  });

  it("the key is the content: the same bytes under another name reuse the module", async () => {
    const { engine, counter } = instance();
    await engine.evaluate(pool, [source("a", "package same\n\nallow := true\n")], input());
    const [r] = await engine.evaluate(pool, [source("b", "package same\n\nallow := true\n")], input());
    expect(r).toEqual({ name: "b", pass: true, reason: "allowed" });
    expect(counter.compiles).toBe(1);
  });

  it("a compiler error is cached too: no instance compiles that version again", async () => {
    const first = instance();
    const p = source("old", PARSE_ERROR);
    const [r1] = await first.engine.evaluate(pool, [p], input());
    await first.engine.evaluate(pool, [p], input());
    expect(first.counter.compiles).toBe(1);
    const stored = await row(p.sha256);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.has_wasm).toBe(false);
    expect(r1!.reason).toBe(`policy failed to compile: ${stored[0]!.error}`);
    const second = instance();
    expect(await second.engine.evaluate(pool, [p], input())).toEqual([r1]);
    expect(second.counter.compiles).toBe(0);
  });

  it("concurrent first evaluations of a new version share one compilation", async () => {
    const { engine, counter } = instance();
    const p = source("burst", "package burst\n\nallow if input.draft == false\n");
    const all = await Promise.all(Array.from({ length: 8 }, () => engine.evaluate(pool, [p], input())));
    expect(all.flat().every((r) => r.pass)).toBe(true);
    expect(counter.compiles).toBe(1);
  });

  it("prepare compiles ahead, so evaluate inside a transaction compiles nothing", async () => {
    const { engine, counter } = instance();
    const p = source("prepared", "package prepared\n\nallow if count(input.changed_paths) < 10\n");
    await engine.prepare(pool, [p]);
    expect(counter.compiles).toBe(1);
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      expect(await engine.evaluate(client, [p], input())).toMatchObject([{ pass: true }]);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect(counter.compiles).toBe(1);
    expect(await row(p.sha256)).toHaveLength(1);
  });

  it("a failure that says nothing about the source (no opa) is not cached: the next try compiles", async () => {
    const p = source("later", "package later\n\nallow := true\n");
    const broken = createPolicyEngine({ opaPath: "/nonexistent/opa" });
    engines.push(broken);
    expect((await broken.evaluate(pool, [p], input()))[0]!.pass).toBe(false);
    expect(await row(p.sha256)).toHaveLength(0);
    const { engine, counter } = instance();
    expect(await engine.evaluate(pool, [p], input())).toEqual([
      { name: "later", pass: true, reason: "allowed" },
    ]);
    expect(counter.compiles).toBe(1);
  });

  it("refuses a source whose sha256 is not its own rather than cache it under the wrong key", async () => {
    const { engine } = instance();
    const p = { ...source("liar", "package liar\n\nallow := true\n"), sha256: source("x", "other").sha256 };
    await expect(engine.evaluate(pool, [p], input())).rejects.toThrow(/does not match its sha256/);
    expect(await row(p.sha256)).toHaveLength(0);
  });
});
