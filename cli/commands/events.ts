import type { Command } from "commander";
import type { StreamMessage } from "../client/index.ts";
import { StreamRefused } from "../client/sse.ts";
import type { CliEnv } from "../env.ts";
import { CliError, usageError } from "../errors.ts";
import { longType, shortType } from "./subscriptions.ts";

interface Envelope {
  type?: string;
  time?: string;
  source?: string;
  data?: Record<string, unknown>;
}

/** A one-line summary of an event's data: its most telling fields. */
function summary(data: Record<string, unknown> | undefined): string {
  if (!data) return "";
  const keys = [
    "branch",
    "sequence",
    "author",
    "message",
    "check_name",
    "status",
    "identity",
    "role",
    "title",
  ];
  return keys
    .filter((k) => data[k] !== undefined && data[k] !== null)
    .map((k) => `${k}=${typeof data[k] === "string" ? data[k] : JSON.stringify(data[k])}`)
    .join(" ");
}

/** `quire events [repo]`: follow a repo's stream, or the global one. */
export function register(program: Command, env: CliEnv): void {
  program
    .command("events [repo]")
    .description("follow events live: a repo's, or every repo's (global admins); resumes after a drop")
    .option("-t, --type <types>", "comma-separated event types to show, e.g. commit.created,branch.merged")
    .option("--after <id>", "start after this event id (replays what came since)")
    .option("-n, --limit <n>", "stop after this many events")
    .action(async (repo: string | undefined, opts: { type?: string; after?: string; limit?: string }) => {
      const out = env.out;
      const types = opts.type
        ?.split(",")
        .map((t) => longType(t.trim()))
        .filter((t) => t !== "com.svc.");
      if (opts.limit !== undefined && !/^[1-9]\d*$/.test(opts.limit))
        throw usageError(`--limit must be a positive whole number, got '${opts.limit}'`);
      const limit = opts.limit === undefined ? Number.POSITIVE_INFINITY : Number(opts.limit);
      const client = await env.client();
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      let shown = 0;
      let last: string | undefined = opts.after;
      try {
        const stream = client.events({
          ...(repo ? { repo } : {}),
          ...(types?.length ? { types } : {}),
          ...(opts.after ? { lastEventId: opts.after } : {}),
          signal: stop.signal,
          onReconnect: (attempt, lastId) =>
            out.note(
              out.c.dim(`connection lost; reconnecting (attempt ${attempt}) after ${lastId ?? "the start"}`),
            ),
        });
        if (out.tty && !out.json) out.note(out.c.dim(`following ${repo ?? "all events"}; Ctrl-C to stop`));
        for await (const m of stream) {
          if (m.event === "message") {
            const e = m.data as Envelope;
            // The global stream has no server-side type filter: filter here.
            if (types?.length && !types.includes(e.type ?? "")) continue;
            last = m.id;
            print(env, m, e);
            if (++shown >= limit) break;
          } else notice(env, m);
        }
      } catch (e) {
        // Without a repo this is the global stream, which only global admins may follow.
        if (!repo && e instanceof StreamRefused && e.status === 403)
          throw new CliError("the stream of every repo's events is for global admins", {
            hint: "name a repo to follow its events: `quire events <org>/<repo>`",
          });
        throw e;
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        if (stop.signal.aborted && last && !out.json) out.note(`resume with: --after ${last}`);
      }
    });
}

function print(env: CliEnv, m: StreamMessage, e: Envelope): void {
  const out = env.out;
  if (out.json) {
    // One JSON object per line, so `jq` can read the stream as it comes.
    out.line(JSON.stringify({ id: m.id, ...e }));
    return;
  }
  const repo = (e.data?.["repo"] as string | undefined) ?? e.source?.replace(/^\/repos\//, "") ?? "";
  const type = shortType(e.type ?? "?");
  if (!out.tty) {
    out.line([m.id, e.time, type, repo, summary(e.data)].join("\t"));
    return;
  }
  const time = e.time ? new Date(e.time).toLocaleTimeString("en-GB") : "";
  out.line(`${out.c.dim(time)}  ${out.c.cyan(type.padEnd(18))} ${out.c.bold(repo)}  ${summary(e.data)}`);
}

function notice(env: CliEnv, m: StreamMessage): void {
  const out = env.out;
  if (out.json) {
    out.line(JSON.stringify({ notice: m.event, ...(m.data as object) }));
    return;
  }
  const data = m.data as { reason?: string };
  if (m.event === "gap")
    out.note(out.c.yellow(`some events are no longer kept (${data.reason ?? "gap"}); reload what you track`));
  else if (m.event === "closed")
    out.note(out.c.red(`the server closed the stream: ${data.reason ?? "closed"}`));
}
