import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pushBusyboxImage, startRegistry } from "../support/oci-registry.ts";
import { runQuire } from "./support.ts";

describe("quire ci run --local against a plain-HTTP registry", () => {
  let registry: Awaited<ReturnType<typeof startRegistry>>;
  let image: string;
  let home: string;
  beforeAll(async () => {
    registry = await startRegistry();
    image = (await pushBusyboxImage(registry.host)).ref;
    home = await mkdtemp(path.join(tmpdir(), "quire-ci-tls-"));
  });
  afterAll(async () => {
    await registry.close();
    await rm(home, { recursive: true, force: true });
  });

  it("names SVC_CI_INSECURE_REGISTRIES when the registry does not speak TLS", async () => {
    const dir = path.join(home, "f");
    await mkdir(path.join(dir, ".svc"), { recursive: true });
    await writeFile(
      path.join(dir, ".svc", "ci.yaml"),
      `checks:\n  - name: hello\n    image: ${image}\n    steps:\n      - echo hi\n`,
    );
    const res = await runQuire(["ci", "run", "--local"], home, {
      cwd: dir,
      env: { SVC_CI_CACHE_DIR: path.join(home, "cache") },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`the registry ${registry.host} does not answer TLS`);
    expect(res.stderr).toContain(`SVC_CI_INSECURE_REGISTRIES=${registry.host}`);
  });
});
