import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { checkRunListResponse } from "../../shared/api/review.ts";
import { docBlock, replaceAll, runShell } from "../support/doc-blocks.ts";
import { freePort } from "../support/ports.ts";
import { startDocRegistry, startDocServer } from "./support.ts";

/**
 * docs/ci-worker.md, "A CI image with no outside registry": every command of the section, as the
 * page shows it, with free ports for 8080 and 5000. The server is `npm start` on a fresh database
 * of the test cluster (DATABASE_URL set, as a reader with their own PostgreSQL would); the worker
 * is `npm run worker`, pointed at it by SVC_CI_SCHEDULER_URL, which the page leaves at its default.
 */

const PAGE = "docs/ci-worker.md";

it("builds the image, pushes it and runs a check in it through the real worker, as documented", async () => {
  const scratch = await mkdtemp(path.join(tmpdir(), "quire-doc-ci-image-"));
  const quire = `127.0.0.1:${await freePort()}`;
  const registry = `127.0.0.1:${await freePort()}`;
  const stops: (() => Promise<void>)[] = [];
  try {
    const server = await startDocServer(
      replaceAll(docBlock(PAGE, "ci-image/server"), { "127.0.0.1:8080": quire }),
      quire,
      scratch,
    );
    stops.push(server.stop);
    const registryShell = await startDocRegistry(registry);
    stops.push(registryShell.stop);

    // Terminal 3: the build and the run, one shell, as one terminal session.
    const terminal = [
      replaceAll(docBlock(PAGE, "ci-image/build"), { "127.0.0.1:5000": registry }),
      replaceAll(docBlock(PAGE, "ci-image/run"), { "127.0.0.1:5000": registry, "localhost:8080": quire }),
    ].join("");
    const { code, output } = await runShell(terminal, {
      env: {
        TMPDIR: scratch, // mktemp -d
        SVC_CI_SCHEDULER_URL: `http://${quire}`,
        SVC_CI_CACHE_DIR: path.join(scratch, "cache"),
        SVC_CI_WORK_DIR: scratch,
      },
    });
    expect(code, output).toBe(0);

    const manifest = await fetch(`http://${registry}/v2/ci/busybox/manifests/1`, {
      headers: { accept: "application/vnd.docker.distribution.manifest.v2+json" },
    });
    expect(manifest.status, "the pushed image is pullable").toBe(200);

    const checks = checkRunListResponse.parse(
      await (await fetch(`http://${quire}/repos/acme/docs/-/branch/main/checks`)).json(),
    );
    const test = checks.check_runs.find((run) => run.check_name === "test");
    expect(test?.status, output).toBe("passed");
    const log = await fetch(test?.log_url ?? "");
    expect(log.status).toBe(200);
    expect(await log.text()).toMatch(/hello from BusyBox v1\.\d+/);
  } finally {
    for (const stop of stops.reverse()) await stop();
    await rm(scratch, { recursive: true, force: true });
  }
}, 90_000);
