import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { startServer } from "../../functions/server.ts";
import { api } from "../support/api.ts";
import { client } from "../support/client.ts";
import { freePort } from "../support/ports.ts";
import { expectOk } from "../support/world.ts";

const quiet = new Writable({ write: (_c, _e, done) => done() });

describe("local mode without DATABASE_URL", () => {
  it("runs embedded PostgreSQL in SVC_DATA_DIR and keeps the data across a restart", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "quire-data-"));
    await chmod(dataDir, 0o755);
    const env = {
      PORT: "0",
      SVC_DATA_DIR: dataDir,
      SVC_EMBEDDED_PG_PORT: String(await freePort()),
      DEV_IDENTITY: "dev@example.com",
      LOG_LEVEL: "error",
    };
    try {
      const first = await startServer(env, { logTo: quiet });
      const created = await client(first.url, async () => null).post("/orgs", { name: "kept" });
      expect(created.status).toBe(201);
      await first.close();

      const second = await startServer(env, { logTo: quiet });
      try {
        const again = await api(client(second.url, async () => null)).get("/orgs/:org", {
          params: { org: "kept" },
        });
        expectOk(again, 200);
        expect(again.body.name).toBe("kept");
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
