import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../shared/config.ts";

describe("configuration", () => {
  it("applies the spec's defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 8080,
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      SVC_BLOB_STORE: "local",
      SVC_BLOB_THRESHOLD_BYTES: 1_048_576,
      SVC_BLOB_LOCAL_DIR: "/tmp/svc-blobs",
      OIDC_ISSUER: "https://accounts.google.com",
      GLOBAL_ADMINS: [],
    });
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it("splits GLOBAL_ADMINS on commas and trims", () => {
    expect(loadConfig({ GLOBAL_ADMINS: " a@x.io, b@x.io ,," }).GLOBAL_ADMINS).toEqual(["a@x.io", "b@x.io"]);
  });

  it.each([
    ["PORT", "eighty", /PORT: must be a whole number/],
    ["PORT", "70000", /PORT: must be between 0 and 65535/],
    ["LOG_FORMAT", "xml", /LOG_FORMAT/],
    ["LOG_LEVEL", "verbose", /LOG_LEVEL/],
    ["SVC_BLOB_STORE", "s3", /SVC_BLOB_STORE/],
    ["SVC_BLOB_THRESHOLD_BYTES", "-1", /SVC_BLOB_THRESHOLD_BYTES/],
    ["OIDC_ISSUER", "http://idp.example.com", /OIDC_ISSUER: must be https/],
    ["OIDC_ISSUER", "not a url", /OIDC_ISSUER: must be a URL/],
    ["DEV_IDENTITY", "dev", /DEV_IDENTITY: must be an email address/],
    ["HOST", "example.com", /HOST: must be an IP address or localhost/],
    ["DEV_IDENTITY", "dev\u0000@example.com", /DEV_IDENTITY: must be an email address/],
    ["BOOTSTRAP_ADMIN", "root @example.com", /BOOTSTRAP_ADMIN: must be an email address/],
    ["SVC_DB_STREAM_USERS", 'a"; DROP TABLE repos; --', /SVC_DB_STREAM_USERS: must be database user names/],
  ])("refuses %s=%s with a message naming it", (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it("allows DEV_IDENTITY only when HOST is loopback (default 127.0.0.1)", () => {
    const dev = "dev@example.com";
    expect(loadConfig({}).HOST).toBe("127.0.0.1");
    for (const host of [undefined, "127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
      expect(loadConfig({ DEV_IDENTITY: dev, HOST: host }).DEV_IDENTITY).toBe(dev);
    for (const host of ["0.0.0.0", "::", "192.0.2.2", "::ffff:127.0.0.1"])
      expect(() => loadConfig({ DEV_IDENTITY: dev, HOST: host })).toThrow(
        `invalid configuration: DEV_IDENTITY: is refused with HOST=${host}:`,
      );
    expect(loadConfig({ HOST: "0.0.0.0" }).HOST).toBe("0.0.0.0");
  });

  it("refuses DEV_IDENTITIES alone on a HOST that is not loopback, as DEV_IDENTITY", () => {
    const several = "alice@example.com,bob@example.com";
    expect(loadConfig({ DEV_IDENTITIES: several, HOST: "127.0.0.1" }).DEV_IDENTITY).toBe("alice@example.com");
    expect(() => loadConfig({ DEV_IDENTITIES: several, HOST: "0.0.0.0" })).toThrow(
      "invalid configuration: DEV_IDENTITIES: is refused with HOST=0.0.0.0:",
    );
  });

  it("reads SVC_DB_STREAM_USERS as a list of IAM database users", () => {
    expect(loadConfig({ SVC_DB_STREAM_USERS: "quire-events@p.iam, other" }).SVC_DB_STREAM_USERS).toEqual([
      "quire-events@p.iam",
      "other",
    ]);
  });

  it("logs in to Cloud SQL either as an IAM user or as a built-in user with its password", () => {
    const instance = { SVC_CLOUD_SQL_INSTANCE: "p:r:i" };
    expect(() => loadConfig(instance)).toThrow(/SVC_DB_IAM_USER: is required/);
    expect(
      loadConfig({ ...instance, SVC_DB_USER: "quire_migrator", SVC_DB_PASSWORD: "pw" }).SVC_DB_USER,
    ).toBe("quire_migrator");
    expect(() => loadConfig({ ...instance, SVC_DB_USER: "quire_migrator" })).toThrow(
      /SVC_DB_USER: needs SVC_DB_PASSWORD/,
    );
    expect(() => loadConfig({ SVC_DB_USER: "quire_migrator", SVC_DB_PASSWORD: "pw" })).toThrow(
      /SVC_DB_USER: needs SVC_DB_PASSWORD and SVC_CLOUD_SQL_INSTANCE/,
    );
    expect(() =>
      loadConfig({
        ...instance,
        SVC_DB_IAM_USER: "f@p.iam",
        SVC_DB_USER: "quire_migrator",
        SVC_DB_PASSWORD: "pw",
      }),
    ).toThrow(/SVC_DB_USER: is refused together with SVC_DB_IAM_USER/);
    expect(loadConfig({ SVC_DB_APP_USERS: "quire-functions@p.iam" }).SVC_DB_APP_USERS).toEqual([
      "quire-functions@p.iam",
    ]);
    expect(() => loadConfig({ SVC_DB_APP_USERS: "a; DROP" })).toThrow(
      /SVC_DB_APP_USERS: must be database user names/,
    );
  });

  it("needs SVC_BLOB_BUCKET when the blob store is gcs", () => {
    expect(() => loadConfig({ SVC_BLOB_STORE: "gcs" })).toThrow(
      /SVC_BLOB_BUCKET: is required when SVC_BLOB_STORE=gcs/,
    );
    expect(loadConfig({ SVC_BLOB_STORE: "gcs", SVC_BLOB_BUCKET: "b" }).SVC_BLOB_BUCKET).toBe("b");
  });

  it("accepts an http issuer only on a loopback address", () => {
    expect(loadConfig({ OIDC_ISSUER: "http://127.0.0.1:9000/" }).OIDC_ISSUER).toBe("http://127.0.0.1:9000");
    expect(loadConfig({ OIDC_ISSUER: "http://localhost:9000" }).OIDC_ISSUER).toBe("http://localhost:9000");
    expect(() => loadConfig({ OIDC_ISSUER: "http://10.0.0.1" })).toThrow(ConfigError);
  });

  it("stops `npm start` with exit code 2 and a message naming the bad variable", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "functions/main.ts"], {
      env: { ...process.env, PORT: "not-a-port", LOG_LEVEL: "loud" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("PORT: must be a whole number");
    expect(run.stderr).toContain("LOG_LEVEL");
  });
});
