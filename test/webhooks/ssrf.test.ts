import http from "node:http";
import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AddressKind, classifyAddress } from "../../shared/webhooks/addresses.ts";
import { type Resolver, systemResolver } from "../../shared/webhooks/guard.ts";
import { sendWebhook } from "../../shared/webhooks/send.ts";
import { commit } from "../support/world.ts";
import { ADMIN, outboxOf, type Receiver, startReceiver, subscribe, useGuardedWebhookApp } from "./support.ts";

/**
 * The SSRF guard at send time: the host is resolved when sending and refused if any address is
 * loopback or private (unless allowed), link-local or metadata (always); the connection goes to
 * the vetted address only. Refusals are checked with agents that record any connection attempt
 * instead of making it, so a broken guard could not send traffic anywhere.
 */

const names: Record<string, string[]> = {};
const resolve: Resolver = async (host) =>
  names[host]?.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })) ?? systemResolver(host);

/** Agents that never connect: they count attempts and fail them. */
function trapAgents() {
  const attempts: string[] = [];
  const trap = <A extends http.Agent>(agent: A) => {
    (agent as unknown as { createConnection: unknown }).createConnection = (opts: { host?: string }) => {
      attempts.push(String(opts.host));
      throw new Error("connection attempted");
    };
    return agent;
  };
  return { attempts, agents: { http: trap(new http.Agent()), https: trap(new https.Agent()) } };
}

const body = Buffer.from("{}");

describe("sendWebhook refuses before connecting", () => {
  names["ten.quire.test"] = ["10.1.2.3"];
  names["home.quire.test"] = ["192.168.0.5"];
  names["meta.quire.test"] = ["169.254.169.254"];
  names["mixed.quire.test"] = ["203.0.113.10", "127.0.0.1"];
  const refusedByDefault = [
    "http://localhost/x",
    "http://127.0.0.1/x",
    "http://[::1]/x",
    "http://[::ffff:10.0.0.1]/x",
    "http://10.0.0.1/x",
    "http://192.168.1.1/x",
    "https://ten.quire.test/x",
    "https://home.quire.test/x",
    "https://mixed.quire.test/x",
  ];
  const refusedAlways = [
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://metadata.google.internal/",
    "https://meta.quire.test/",
    "http://[fe80::1]/",
    "http://0.0.0.0/",
  ];
  for (const url of [...refusedByDefault, ...refusedAlways]) {
    it(`${url} (private not allowed)`, async () => {
      const { attempts, agents } = trapAgents();
      const outcome = await sendWebhook({ url, secret: "s" }, body, {
        allowPrivate: false,
        resolve,
        timeoutMs: 2000,
        agents,
      });
      expect(outcome.ok).toBe(false);
      expect(outcome.error).toMatch(/^refused: /);
      expect(attempts).toEqual([]);
    });
  }
  for (const url of refusedAlways) {
    it(`${url} (even with private allowed)`, async () => {
      const { attempts, agents } = trapAgents();
      const outcome = await sendWebhook({ url, secret: null }, body, {
        allowPrivate: true,
        resolve,
        timeoutMs: 2000,
        agents,
      });
      expect(outcome.error).toMatch(/^refused: /);
      expect(attempts).toEqual([]);
    });
  }
});

describe("the connection goes to the vetted address", () => {
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
  });

  it("with the original name in the Host header, and no second lookup the name could answer differently", async () => {
    // The system resolver does not know this name: had the connect looked it up again, it would fail.
    names["pinned.quire.test"] = ["127.0.0.1"];
    const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent() };
    for (const withAgent of [false, true]) {
      const outcome = await sendWebhook(
        { url: `http://pinned.quire.test:${rx.port}/pin`, secret: null },
        body,
        {
          allowPrivate: true,
          resolve,
          timeoutMs: 2000,
          ...(withAgent ? { agents } : {}),
        },
      );
      expect(outcome).toEqual({ ok: true, status: 200, error: null });
    }
    expect(rx.at("/pin").map((r) => r.headers.host)).toEqual([
      `pinned.quire.test:${rx.port}`,
      `pinned.quire.test:${rx.port}`,
    ]);
    agents.http.destroy();
  });
});

describe("in the running service", () => {
  const { app, rx, fx } = useGuardedWebhookApp(resolve);

  it("a name that resolved publicly at creation and privately at send time is refused then", async () => {
    names["rebind.quire.test"] = ["203.0.113.10"];
    const sub = await subscribe(app.as(ADMIN), { url: `http://rebind.quire.test:${rx.port}/rebind` });
    names["rebind.quire.test"] = ["127.0.0.1"]; // before any event: nothing is ever sent to the public address
    await commit(fx, "main", { "a.md": "1" });
    await app.webhooks.drain();
    const rows = await outboxOf(app, sub.id);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row).toMatchObject({ delivered_at: null, last_status: null, attempts: 1 });
      expect(row.last_error).toContain("127.0.0.1, which is a loopback address");
    }
    expect(rx.receipts).toEqual([]);
    await app.sql("DELETE FROM subscriptions WHERE id = $1", [sub.id]);
  });

  it("a loopback URL stored while private addresses were allowed is refused at send time", async () => {
    await app.sql(
      `INSERT INTO subscriptions (id, repo, repo_id, backend, url, created_by)
       VALUES (gen_random_uuid(), $1, $2, 'webhook', $3, $4)`,
      [fx.repo, fx.repoId, rx.url("/stored"), fx.owner],
    );
    await commit(fx, "main", { "a.md": "2" });
    await app.webhooks.drain();
    const [row] = await app.sql<{ last_error: string }>(
      "SELECT o.last_error FROM webhook_outbox o JOIN subscriptions s ON s.id = o.subscription_id WHERE s.url = $1",
      [rx.url("/stored")],
    );
    expect(row!.last_error).toBe("refused: '127.0.0.1' is a loopback address; webhooks may not reach it");
    expect(rx.receipts).toEqual([]);
  });
});

describe("address kinds", () => {
  const table: [string, AddressKind][] = [
    ["8.8.8.8", "public"],
    ["203.0.113.10", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["0:0:0:0:0:ffff:7f00:0001", "loopback"],
    ["10.255.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.1", "public"],
    ["192.168.0.1", "private"],
    ["100.64.0.1", "private"],
    ["fc00::1", "private"],
    ["fdff:ffff::1", "private"],
    ["::ffff:192.168.1.1", "private"],
    ["169.254.0.1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["169.254.169.254", "metadata"],
    ["::ffff:169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["fd00:ec2:0:0:0:0:0:254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.251", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["64:ff9b::8.8.8.8", "public"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:a9fe:a9fe::", "metadata"],
    ["2001:4860:4860::8888", "public"],
  ];
  for (const [address, kind] of table) {
    it(`${address} is ${kind}`, () => expect(classifyAddress(address)).toBe(kind));
  }
});
