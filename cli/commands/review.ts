import type { Command } from "commander";
import type { CliEnv } from "../env.ts";
import type { Column } from "../output.ts";
import { resource, type VerbCall } from "./resource.ts";

interface Proposal {
  id: string;
  branch: string;
  base_branch: string;
  title: string;
  description: string;
  author: string;
  state: string;
  updated_at: string;
}
const PROPOSAL: Column<Proposal>[] = [
  { header: "id", value: (p) => p.id },
  { header: "title", value: (p) => p.title },
  { header: "state", value: (p) => p.state, kind: "state" },
  { header: "branch", value: (p) => `${p.branch} → ${p.base_branch}` },
  { header: "author", value: (p) => p.author },
  { header: "updated", value: (p) => p.updated_at, kind: "time" },
];
interface Review {
  id: string;
  status: string;
  reviewer: string;
  sequence: number;
  body: string;
  created_at: string;
}
const REVIEW: Column<Review>[] = [
  { header: "id", value: (r) => r.id },
  { header: "status", value: (r) => r.status, kind: "state" },
  { header: "reviewer", value: (r) => r.reviewer },
  { header: "at", value: (r) => r.sequence },
  { header: "body", value: (r) => r.body },
  { header: "created", value: (r) => r.created_at, kind: "time" },
];
interface Comment {
  id: string;
  path: string;
  body: string;
  author: string;
  sequence: number;
  created_at: string;
}
const COMMENT: Column<Comment>[] = [
  { header: "id", value: (c) => c.id },
  { header: "path", value: (c) => c.path },
  { header: "author", value: (c) => c.author },
  { header: "at", value: (c) => c.sequence },
  { header: "body", value: (c) => c.body },
  { header: "created", value: (c) => c.created_at, kind: "time" },
];
interface CheckRun {
  check_name: string;
  status: string;
  sequence: number;
  reporter: string;
  log_url: string | null;
  updated_at: string;
}
export const CHECK: Column<CheckRun>[] = [
  { header: "check", value: (c) => c.check_name },
  { header: "status", value: (c) => c.status, kind: "state" },
  { header: "at", value: (c) => c.sequence },
  { header: "reporter", value: (c) => c.reporter },
  { header: "log", value: (c) => c.log_url },
  { header: "updated", value: (c) => c.updated_at, kind: "time" },
];

const at = (opts: Record<string, unknown>) => (opts["at"] === undefined ? {} : { at: String(opts["at"]) });

/** `quire proposals`, `quire reviews`, `quire comments`, `quire checks`. */
export function register(program: Command, env: CliEnv): void {
  resource(program, env, {
    name: "proposals",
    aliases: ["proposal", "pr"],
    summary: "proposals to merge a branch",
    verbs: [
      {
        name: "list [repo]",
        aliases: ["ls"],
        summary: "the repo's proposals (open ones unless --state says otherwise)",
        fromCopy: ["repo"],
        options: [
          {
            flags: "--state <state>",
            description: "open (the default), closed, merged or all",
            choices: ["open", "closed", "merged", "all"],
            default: "open",
          },
          { flags: "--branch <branch>", description: "only this branch's" },
        ],
        run: async ({ client, out, args: [repo = ""], opts }) => {
          const state = opts["state"] as "open" | "closed" | "merged" | "all";
          const query = {
            state: state === "all" ? undefined : state,
            branch: opts["branch"] as string | undefined,
          };
          out.table(
            (await (await client()).get("/repos/:repo*/-/proposals", { params: { repo }, query })).proposals,
            PROPOSAL,
          );
        },
      },
      {
        name: "view [repo] [id]",
        summary: "one proposal",
        fromCopy: ["repo"],
        run: async ({ client, out, args: [repo = "", id = ""] }) =>
          out.record(await (await client()).get("/repos/:repo*/-/proposals/:id", { params: { repo, id } }), [
            ...PROPOSAL,
            { header: "description", value: (p) => p.description },
          ]),
      },
      {
        name: "open [repo] [branch]",
        aliases: ["create"],
        summary: "propose merging a branch",
        fromCopy: ["repo", "branch"],
        options: [
          { flags: "-t, --title <title>", description: "its title", required: true },
          { flags: "-d, --description <text>", description: "what and why" },
          { flags: "--base <branch>", description: "the branch to merge into (default main)" },
        ],
        run: async ({ client, out, args: [repo = "", branch = ""], opts }) => {
          const p = await (await client()).post("/repos/:repo*/-/proposals", {
            params: { repo },
            body: {
              branch,
              title: opts["title"] as string,
              ...(opts["description"] ? { description: opts["description"] as string } : {}),
              ...(opts["base"] ? { base_branch: opts["base"] as string } : {}),
            },
          });
          out.done(`opened proposal ${p.id}: ${p.title}`, p);
        },
      },
      {
        name: "edit [repo] [id]",
        summary: "change a proposal's title or description",
        fromCopy: ["repo"],
        options: [
          { flags: "-t, --title <title>", description: "new title" },
          { flags: "-d, --description <text>", description: "new description" },
        ],
        run: async ({ client, out, args: [repo = "", id = ""], opts }) => {
          const p = await (await client()).patch("/repos/:repo*/-/proposals/:id", {
            params: { repo, id },
            body: {
              ...(opts["title"] !== undefined ? { title: opts["title"] as string } : {}),
              ...(opts["description"] !== undefined ? { description: opts["description"] as string } : {}),
            },
          });
          out.done(`updated proposal ${p.id}`, p);
        },
      },
      {
        name: "close [repo] [id]",
        summary: "close a proposal without merging",
        fromCopy: ["repo"],
        run: async ({ client, out, args: [repo = "", id = ""] }) => {
          const p = await (await client()).post("/repos/:repo*/-/proposals/:id/close", {
            params: { repo, id },
            body: {},
          });
          out.done(`closed proposal ${p.id}`, p);
        },
      },
    ],
  });

  resource(program, env, {
    name: "reviews",
    aliases: ["review"],
    summary: "approvals and rejections of a branch",
    verbs: [
      {
        name: "list [repo] [branch]",
        aliases: ["ls"],
        summary: "the branch's reviews",
        fromCopy: ["repo", "branch"],
        options: [{ flags: "--at <sequence>", description: "as of this sequence" }],
        run: async ({ client, out, args: [repo = "", branch = ""], opts }) =>
          out.table(
            await (await client()).get("/repos/:repo*/-/branch/:branch*/reviews", {
              params: { repo, branch },
              query: at(opts),
            }),
            REVIEW,
          ),
      },
      ...(["approve", "reject"] as const).map((verb) => ({
        name: `${verb} [repo] [branch]`,
        fromCopy: ["repo", "branch"] as const,
        summary: verb === "approve" ? "approve the branch at its head" : "reject the branch at its head",
        options: [{ flags: "-m, --body <text>", description: "what you say with it", default: "" }],
        run: async ({ client, out, args: [repo = "", branch = ""], opts }: VerbCall) => {
          const r = await (await client()).post("/repos/:repo*/-/review", {
            params: { repo },
            body: {
              branch,
              status: verb === "approve" ? "approved" : "rejected",
              body: opts["body"] as string,
            },
          });
          out.done(`${r.status} ${branch} at ${r.sequence}`, r);
        },
      })),
    ],
  });

  resource(program, env, {
    name: "comments",
    aliases: ["comment"],
    summary: "comments on a branch's files",
    verbs: [
      {
        name: "list [repo] [branch]",
        aliases: ["ls"],
        summary: "the branch's comments",
        fromCopy: ["repo", "branch"],
        options: [{ flags: "--path <path>", description: "only on this file" }],
        run: async ({ client, out, args: [repo = "", branch = ""], opts }) =>
          out.table(
            (
              await (
                await client()
              ).get("/repos/:repo*/-/branch/:branch*/comments", {
                params: { repo, branch },
                query: { path: opts["path"] as string | undefined },
              })
            ).comments,
            COMMENT,
          ),
      },
      {
        name: "add [repo] [branch] [path]",
        fromCopy: ["repo", "branch"],
        aliases: ["create"],
        summary: "comment on a file of a branch",
        options: [{ flags: "-m, --body <text>", description: "the comment", required: true }],
        run: async ({ client, out, args: [repo = "", branch = "", path = ""], opts }) => {
          const c = await (await client()).post("/repos/:repo*/-/comment", {
            params: { repo },
            body: { branch, path, body: opts["body"] as string },
          });
          out.done(`commented on ${c.path} (${c.id})`, c);
        },
      },
      {
        name: "delete [repo] [id]",
        aliases: ["rm"],
        summary: "delete a comment",
        fromCopy: ["repo"],
        run: async ({ client, out, args: [repo = "", id = ""] }) => {
          await (await client()).delete("/repos/:repo*/-/comment/:id", { params: { repo, id } });
          out.done(`deleted comment ${id}`, { deleted: id });
        },
      },
    ],
  });

  resource(program, env, {
    name: "checks",
    aliases: ["check"],
    summary: "check runs reported on a branch",
    verbs: [
      {
        name: "list [repo] [branch]",
        aliases: ["ls"],
        summary: "the branch's check runs",
        fromCopy: ["repo", "branch"],
        options: [{ flags: "--at <sequence>", description: "as of this sequence" }],
        run: async ({ client, out, args: [repo = "", branch = ""], opts }) =>
          out.table(
            (
              await (
                await client()
              ).get("/repos/:repo*/-/branch/:branch*/checks", {
                params: { repo, branch },
                query: at(opts),
              })
            ).check_runs,
            CHECK,
          ),
      },
      {
        name: "report [repo] [branch] [check]",
        fromCopy: ["repo", "branch"],
        summary: "report a check's result for the branch's head (or --sequence)",
        options: [
          {
            flags: "--status <status>",
            description: "passed, failed or pending",
            choices: ["passed", "failed", "pending"],
            required: true,
          },
          { flags: "--log-url <url>", description: "where its log is" },
          { flags: "--sequence <n>", description: "the sequence it checked (default: the head)" },
        ],
        run: async ({ client, out, args: [repo = "", branch = "", check = ""], opts }) => {
          const c = await (await client()).post("/repos/:repo*/-/check", {
            params: { repo },
            body: {
              branch,
              check_name: check,
              status: opts["status"] as "passed" | "failed" | "pending",
              ...(opts["logUrl"] ? { log_url: opts["logUrl"] as string } : {}),
              ...(opts["sequence"] !== undefined ? { sequence: Number(opts["sequence"]) } : {}),
            },
          });
          out.done(`${c.check_name} ${c.status} at ${c.sequence}`, c);
        },
      },
    ],
  });
}
