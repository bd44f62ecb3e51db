import type { Command } from "commander";
import type { CliEnv } from "../env.ts";
import type { Column } from "../output.ts";
import { resource } from "./resource.ts";

interface Subscription {
  id: string;
  repo?: string;
  event_types?: string[];
  backend: string;
  config: { url: string };
  failure_count: number;
  suspended_at: string | null;
  created_at: string;
}
const SUBSCRIPTION: Column<Subscription>[] = [
  { header: "id", value: (s) => s.id },
  { header: "repo", value: (s) => s.repo ?? "(all)" },
  { header: "url", value: (s) => s.config.url },
  { header: "types", value: (s) => s.event_types?.map(shortType) ?? "(all)" },
  { header: "state", value: (s) => (s.suspended_at ? "suspended" : "active"), kind: "state" },
  { header: "failures", value: (s) => s.failure_count },
  { header: "created", value: (s) => s.created_at, kind: "time" },
];

/** `commit.created` for `com.svc.commit.created`: how people write event types. */
export const shortType = (t: string) => t.replace(/^com\.svc\./, "");
/** The wire's name of an event type written short or long. */
export const longType = (t: string) => (t.startsWith("com.svc.") ? t : `com.svc.${t}`);

/** `quire subscriptions`. */
export function register(program: Command, env: CliEnv): void {
  resource(program, env, {
    name: "subscriptions",
    aliases: ["subscription", "subs"],
    summary: "webhooks: events delivered to a URL",
    verbs: [
      {
        name: "create <url>",
        summary: "deliver events to a URL (a repo's with --repo; all of them: global admins)",
        options: [
          { flags: "-r, --repo <repo>", description: "only this repo's events" },
          { flags: "-t, --type <types>", description: "comma-separated event types, e.g. commit.created" },
          { flags: "--secret <secret>", description: "sign each delivery with this secret" },
        ],
        run: async ({ client, out, args: [url = ""], opts }) => {
          const types = (opts["type"] as string | undefined)?.split(",").map((t) => longType(t.trim()));
          const s = await (await client()).post("/subscriptions", {
            body: {
              backend: "webhook",
              config: { url, ...(opts["secret"] ? { secret: opts["secret"] as string } : {}) },
              ...(opts["repo"] ? { repo: opts["repo"] as string } : {}),
              // The server validates the names; a wrong one is its 400 with the list.
              ...(types ? { event_types: types as never } : {}),
            },
          });
          out.done(`subscribed ${s.config.url} (${s.id})`, s);
        },
      },
      {
        name: "list",
        aliases: ["ls"],
        summary: "the subscriptions you may see",
        run: async ({ client, out }) =>
          out.table((await (await client()).get("/subscriptions")).subscriptions, SUBSCRIPTION),
      },
      {
        name: "delete <id>",
        aliases: ["rm"],
        summary: "stop and delete a subscription",
        run: async ({ client, out, args: [id = ""] }) => {
          await (await client()).delete("/subscriptions/:id", { params: { id } });
          out.done(`deleted subscription ${id}`, { deleted: id });
        },
      },
      {
        name: "resume <id>",
        summary: "resume a subscription suspended after failed deliveries",
        run: async ({ client, out, args: [id = ""] }) => {
          await (await client()).post("/subscriptions/:id/resume", { params: { id }, body: {} });
          out.done(`resumed subscription ${id}`, { resumed: id });
        },
      },
    ],
  });
}
