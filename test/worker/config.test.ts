import { describe, expect, it } from "vitest";
import { DEFAULT_TOKEN_FILE, loadWorkerConfig, parseDuration } from "../../worker/config.ts";
import { imageLimitsFromEnv } from "../../worker/image/limits-env.ts";
import { withJitter } from "../../worker/loop.ts";

describe("the worker's configuration", () => {
  it("defaults to this machine's npm start, the projected token file, no network and 30 minutes", () => {
    const config = loadWorkerConfig({});
    expect(config).toMatchObject({
      schedulerUrl: "http://127.0.0.1:8080",
      credential: { kind: "file", path: DEFAULT_TOKEN_FILE },
      jobAudience: "quire",
      insecureRegistries: [],
      network: "none",
      checkTimeoutMs: 30 * 60_000,
      logCapBytes: 10 * 1024 * 1024,
      pollIntervalMs: 10_000,
      heartbeatIntervalMs: 30_000,
      image: { maxBytes: 8 * 1024 ** 3, maxEntries: 500_000 },
    });
  });

  it("reads every setting", () => {
    const config = loadWorkerConfig({
      SVC_CI_SCHEDULER_URL: "https://ci.example.com/",
      SVC_CI_WORKER_TOKEN: "local-worker-token-1234",
      SVC_CI_INSECURE_REGISTRIES: "127.0.0.1:5000, localhost:5001,[::1]:5002",
      SVC_CI_CHECK_NETWORK: "on",
      SVC_CI_CHECK_TIMEOUT: "90s",
      SVC_CI_LOG_CAP_BYTES: "2048",
      SVC_CI_POLL_INTERVAL: "500ms",
      SVC_CI_HEARTBEAT_INTERVAL: "1m",
      SVC_CI_ARCHIVE_MAX_FILES: "10",
      SVC_CI_IMAGE_MAX_BYTES: "1048576",
      SVC_CI_IMAGE_MAX_ENTRIES: "20",
    });
    expect(config).toMatchObject({
      schedulerUrl: "https://ci.example.com",
      credential: { kind: "static", token: "local-worker-token-1234" },
      insecureRegistries: ["127.0.0.1:5000", "localhost:5001", "[::1]:5002"],
      network: "on",
      checkTimeoutMs: 90_000,
      logCapBytes: 2048,
      pollIntervalMs: 500,
      heartbeatIntervalMs: 60_000,
      archive: { maxFiles: 10 },
      image: { maxBytes: 1048576, maxEntries: 20 },
    });
    expect(imageLimitsFromEnv({ SVC_CI_IMAGE_MAX_ENTRIES: "7" })).toEqual({
      maxBytes: 8 * 1024 ** 3,
      maxEntries: 7,
    });
    expect(() => imageLimitsFromEnv({ SVC_CI_IMAGE_MAX_BYTES: "1GB" })).toThrow(/SVC_CI_IMAGE_MAX_BYTES/);
  });

  it("refuses wrong values, naming each variable", () => {
    const bad = {
      SVC_CI_SCHEDULER_URL: "http://ci.example.com",
      SVC_CI_WORKER_TOKEN: "short",
      SVC_CI_INSECURE_REGISTRIES: "registry.example.com:5000",
      SVC_CI_CHECK_NETWORK: "host",
      SVC_CI_CHECK_TIMEOUT: "soon",
      SVC_CI_HEARTBEAT_INTERVAL: "5m",
      SVC_CI_IMAGE_MAX_BYTES: "-1",
      SVC_CI_IMAGE_MAX_ENTRIES: "0",
    };
    let message = "";
    try {
      loadWorkerConfig(bad);
    } catch (err) {
      message = (err as Error).message;
    }
    for (const name of Object.keys(bad)) expect(message).toContain(name);
    expect(message).toContain("loopback");
  });

  it("reads durations and jitters the poll interval between half and one and a half times", () => {
    expect([parseDuration("90"), parseDuration("250ms"), parseDuration("2h"), parseDuration("x")]).toEqual([
      90_000,
      250,
      7_200_000,
      undefined,
    ]);
    expect([withJitter(1000, () => 0), withJitter(1000, () => 0.999)]).toEqual([500, 1499]);
  });
});
