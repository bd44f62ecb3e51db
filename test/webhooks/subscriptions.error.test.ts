import { describe, expect, it } from "vitest";
import type { Res } from "../support/client.ts";
import { expectError, repoWithOwner, useFixture } from "../support/world.ts";
import { ADMIN, startReceiver, startWebhookApp, subscribe } from "./support.ts";

/** Every bad input is a 4xx in the one error shape, and changes nothing. */

const app = useFixture(startWebhookApp);
const rx = useFixture(startReceiver);
const fx = useFixture(() => repoWithOwner(app as never));

async function state() {
  const [row] = await app.sql(
    `SELECT (SELECT count(*)::int FROM subscriptions) AS subscriptions,
            (SELECT json_agg(s ORDER BY id) FROM subscriptions s) AS rows,
            (SELECT count(*)::int FROM webhook_outbox) AS outbox`,
  );
  return row;
}

const valid = () => ({ repo: fx.repo, backend: "webhook", config: { url: rx.url("/e") } });

describe("POST /subscriptions refuses", () => {
  const cases: [string, () => unknown, number, string][] = [
    ["no body", () => undefined, 400, "VALIDATION_FAILED"],
    ["no backend", () => ({ ...valid(), backend: undefined }), 400, "VALIDATION_FAILED"],
    ["another backend", () => ({ ...valid(), backend: "email" }), 400, "VALIDATION_FAILED"],
    ["no config", () => ({ ...valid(), config: undefined }), 400, "VALIDATION_FAILED"],
    ["no url", () => ({ ...valid(), config: {} }), 400, "VALIDATION_FAILED"],
    ["an empty url", () => ({ ...valid(), config: { url: "" } }), 400, "VALIDATION_FAILED"],
    ["a url that is not a string", () => ({ ...valid(), config: { url: 42 } }), 400, "VALIDATION_FAILED"],
    [
      "a url longer than 2048",
      () => ({ ...valid(), config: { url: `${rx.url("/")}${"a".repeat(2048)}` } }),
      400,
      "VALIDATION_FAILED",
    ],
    ["a relative url", () => ({ ...valid(), config: { url: "/hook" } }), 400, "WEBHOOK_URL_INVALID"],
    ["an ftp url", () => ({ ...valid(), config: { url: "ftp://127.0.0.1/x" } }), 400, "WEBHOOK_URL_INVALID"],
    ["a file url", () => ({ ...valid(), config: { url: "file:///etc/passwd" } }), 400, "WEBHOOK_URL_INVALID"],
    [
      "a javascript url",
      () => ({ ...valid(), config: { url: "javascript:alert(1)" } }),
      400,
      "WEBHOOK_URL_INVALID",
    ],
    [
      "credentials in the url",
      () => ({ ...valid(), config: { url: `http://u:p@127.0.0.1:${rx.port}/` } }),
      400,
      "WEBHOOK_URL_INVALID",
    ],
    [
      "a user name in the url",
      () => ({ ...valid(), config: { url: `http://u@127.0.0.1:${rx.port}/` } }),
      400,
      "WEBHOOK_URL_INVALID",
    ],
    [
      "a host that does not resolve",
      () => ({ ...valid(), config: { url: "http://no-such-host.invalid/" } }),
      400,
      "WEBHOOK_URL_REFUSED",
    ],
    [
      "a secret that is not a string",
      () => ({ ...valid(), config: { url: rx.url(), secret: 1 } }),
      400,
      "VALIDATION_FAILED",
    ],
    [
      "a secret longer than 256",
      () => ({ ...valid(), config: { url: rx.url(), secret: "s".repeat(257) } }),
      400,
      "VALIDATION_FAILED",
    ],
    [
      "an unknown config field",
      () => ({ ...valid(), config: { url: rx.url(), secrets: "x" } }),
      400,
      "VALIDATION_FAILED",
    ],
    [
      "an unknown field",
      () => ({ ...valid(), event_type: ["com.svc.commit.created"] }),
      400,
      "VALIDATION_FAILED",
    ],
    ["an empty event_types", () => ({ ...valid(), event_types: [] }), 400, "VALIDATION_FAILED"],
    [
      "an unknown event type",
      () => ({ ...valid(), event_types: ["com.svc.commit.deleted"] }),
      400,
      "VALIDATION_FAILED",
    ],
    [
      "event_types that is not a list",
      () => ({ ...valid(), event_types: "com.svc.commit.created" }),
      400,
      "VALIDATION_FAILED",
    ],
    ["an invalid repo name", () => ({ ...valid(), repo: "no-slash" }), 400, "VALIDATION_FAILED"],
    ["a repo that does not exist", () => ({ ...valid(), repo: `${fx.org}/missing` }), 404, "REPO_NOT_FOUND"],
    ["a repo that is not a string", () => ({ ...valid(), repo: 7 }), 400, "VALIDATION_FAILED"],
  ];
  for (const [name, body, status, code] of cases) {
    it(name, async () => {
      const before = await state();
      const b = body();
      const res =
        b === undefined
          ? await fx.client.raw("POST", "/subscriptions")
          : await fx.client.post("/subscriptions", b);
      expectError(res, status, code);
      expect(await state()).toEqual(before);
    });
  }

  it("a body that is not JSON", async () => {
    const before = await state();
    const res = await fx.client.raw("POST", "/subscriptions", {
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expectError(res, 400, "MALFORMED_JSON");
    expect(await state()).toEqual(before);
  });

  it("names the bad field", async () => {
    const res = await fx.client.post("/subscriptions", { ...valid(), event_types: ["com.svc.nope"] });
    expect(expectError(res, 400, "VALIDATION_FAILED")).toContain("event_types");
    const url = await fx.client.post("/subscriptions", { ...valid(), config: { url: "gopher://x" } });
    expect(expectError(url, 400, "WEBHOOK_URL_INVALID")).toContain("config.url");
  });
});

describe("DELETE and resume refuse", () => {
  it("an id that is not a UUID, or that does not exist, is 404 and changes nothing", async () => {
    await subscribe(fx.client, { repo: fx.repo, url: rx.url("/kept") });
    const before = await state();
    for (const id of ["nope", "00000000-0000-0000-0000-000000000000", "1", "%20"]) {
      expectError(await fx.client.delete(`/subscriptions/${id}`), 404, "SUBSCRIPTION_NOT_FOUND");
      expectError(await fx.client.post(`/subscriptions/${id}/resume`), 404, "SUBSCRIPTION_NOT_FOUND");
      expectError(await app.as(ADMIN).delete(`/subscriptions/${id}`), 404, "SUBSCRIPTION_NOT_FOUND");
    }
    expect(await state()).toEqual(before);
  });

  it("other methods are 405", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/m") });
    const before = await state();
    const allowed = async (res: Res, allow: string) => {
      expectError(res, 405, "METHOD_NOT_ALLOWED");
      expect(res.headers.get("allow")).toBe(allow);
    };
    await allowed(await fx.client.put("/subscriptions", valid()), "GET, POST");
    await allowed(await fx.client.get(`/subscriptions/${sub.id}`), "DELETE");
    await allowed(await fx.client.get(`/subscriptions/${sub.id}/resume`), "POST");
    expect(await state()).toEqual(before);
  });
});
