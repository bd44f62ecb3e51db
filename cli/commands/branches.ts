import type { Command } from "commander";
import type { ReplyOf } from "../client/index.ts";
import type { CliEnv } from "../env.ts";
import { CliError, usageError } from "../errors.ts";
import type { Column, Output } from "../output.ts";
import { resource, type VerbCall } from "./resource.ts";

interface Branch {
  name: string;
  head_sequence: number;
  base_sequence: number;
  status: string;
  draft: boolean;
  created_by: string;
  created_at: string;
  auto_merge: boolean;
  auto_merge_by: string | null;
}
const BRANCH: Column<Branch>[] = [
  { header: "name", value: (b) => b.name },
  { header: "status", value: (b) => (b.draft && b.status === "active" ? "draft" : b.status), kind: "state" },
  { header: "head", value: (b) => b.head_sequence },
  { header: "base", value: (b) => b.base_sequence },
  { header: "by", value: (b) => b.created_by },
  { header: "created", value: (b) => b.created_at, kind: "time" },
];
/** One branch: the list's columns and whether it merges by itself (docs/auto-merge.md). */
const BRANCH_VIEW: Column<Branch>[] = [
  ...BRANCH,
  { header: "auto-merge", value: (b) => (b.auto_merge ? `on, by ${b.auto_merge_by}` : "off") },
];
interface Role {
  identity: string;
  role: string;
  granted_at: string;
  granted_by: string;
}
const ROLE: Column<Role>[] = [
  { header: "identity", value: (r) => r.identity },
  { header: "role", value: (r) => r.role },
  { header: "granted", value: (r) => r.granted_at, kind: "time" },
  { header: "by", value: (r) => r.granted_by },
];
const ROLES = ["reader", "writer", "maintainer", "admin"] as const;

type Status = ReplyOf<"GET", "/repos/:repo*/-/branch/:branch*/status">;

/** Each changed path that has owners, who they are and who of them approved the head; then invalid OWNERS lines. */
function printOwners(out: Output, owners: Status["owners"]): void {
  if (owners.paths.length > 0)
    out.table(owners.paths, [
      { header: "path", value: (o) => o.path },
      { header: "owners", value: (o) => o.owners.join(", ") },
      { header: "approved by", value: (o) => o.approved_by.join(", ") || "none" },
    ]);
  for (const l of owners.invalid_lines) out.note(out.c.yellow(`${l.file}:${l.line}: ignored: ${l.text}`));
}

/** Whether a branch can merge, each policy's result, each conflict and the owners, as tables. */
function printStatus(out: Output, branch: string, s: Status): void {
  out.line(s.mergeable ? out.c.green(`${branch} can merge`) : out.c.red(`${branch} cannot merge`));
  if (s.policies.length > 0)
    out.table(s.policies, [
      { header: "policy", value: (p) => p.name },
      { header: "result", value: (p) => (p.pass ? "passed" : "failed"), kind: "state" },
      { header: "reason", value: (p) => p.reason },
    ]);
  if (s.conflicts.length > 0)
    out.table(s.conflicts, [
      { header: "conflict", value: (c) => c.path },
      { header: "main", value: (c) => c.main_version_id?.slice(0, 12) ?? "deleted" },
      { header: "branch", value: (c) => c.branch_version_id?.slice(0, 12) ?? "deleted" },
      // The places inside the file both sides changed (docs/merge.md): `limits.max_files`, `line 12`.
      { header: "where", value: (c) => (c.paths ?? []).map((p) => p.path || `line ${p.line}`).join(", ") },
    ]);
  printOwners(out, s.owners);
}

/** `quire branches` and `quire roles`. */
export function register(program: Command, env: CliEnv): void {
  resource(program, env, {
    name: "branches",
    // No `branch` alias: `quire branch [name]` is the working copy's verb (cli/commands/workcopy.ts).
    summary: "a repo's branches: list, create, draft/ready, merge status, delete",
    verbs: [
      {
        name: "list <repo>",
        aliases: ["ls"],
        summary: "the repo's branches with their status",
        options: [
          {
            flags: "--status <status>",
            description: "only branches in this status",
            choices: ["active", "merged", "abandoned"],
          },
          { flags: "--drafts", description: "only draft branches" },
          { flags: "--all", description: "draft branches too (they are left out by default)" },
        ],
        run: async ({ client, out, args: [repo = ""], opts }) => {
          const query = {
            status: opts["status"] as "active" | "merged" | "abandoned" | undefined,
            draft: opts["drafts"] ? ("true" as const) : undefined,
            include_draft: opts["all"] ? ("true" as const) : undefined,
          };
          out.table(
            (await (await client()).get("/repos/:repo*/-/branches", { params: { repo }, query })).branches,
            BRANCH,
          );
        },
      },
      {
        name: "view <repo> <branch>",
        summary: "one branch",
        run: async ({ client, out, args: [repo = "", branch = ""] }) =>
          out.record(
            await (await client()).get("/repos/:repo*/-/branch/:branch*", { params: { repo, branch } }),
            BRANCH_VIEW,
          ),
      },
      {
        name: "create <repo> <branch>",
        summary: "create a branch from main's head",
        options: [{ flags: "--draft", description: "create it as a draft (not mergeable until ready)" }],
        run: async ({ client, out, args: [repo = "", name = ""], opts }) => {
          const b = await (await client()).post("/repos/:repo*/-/branch", {
            params: { repo },
            body: { name, ...(opts["draft"] ? { draft: true } : {}) },
          });
          out.done(`created branch ${b.name} at ${b.base_sequence}${b.draft ? " (draft)" : ""}`, b);
        },
      },
      ...(["draft", "ready"] as const).map((state) => ({
        name: `${state} <repo> <branch>`,
        summary: state === "draft" ? "mark a branch as a draft" : "mark a draft branch ready to merge",
        run: async ({ client, out, args: [repo = "", branch = ""] }: VerbCall) => {
          const b = await (await client()).patch("/repos/:repo*/-/branch/:branch*", {
            params: { repo, branch },
            body: { draft: state === "draft" },
          });
          out.done(`${b.name} is ${state === "draft" ? "a draft" : "ready"}`, b);
        },
      })),
      {
        name: "status <repo> <branch>",
        summary: "whether the branch may merge: each policy's result and each conflict",
        run: async ({ client, out, args: [repo = "", branch = ""] }) => {
          const s = await (await client()).get("/repos/:repo*/-/branch/:branch*/status", {
            params: { repo, branch },
          });
          if (out.json) out.writeJson(s);
          else printStatus(out, branch, s);
          if (!s.mergeable)
            throw new CliError(`${branch} cannot merge yet`, {
              hint: "see the failed policies and conflicts",
            });
        },
      },
      {
        name: "auto-merge <repo> <branch>",
        summary: "merge the branch by itself, as you, once its policies pass (--off: stop)",
        options: [{ flags: "--off", description: "turn auto-merge off" }],
        run: async ({ client, out, args: [repo = "", branch = ""], opts }) => {
          const call = { params: { repo, branch } };
          const api = await client();
          if (opts["off"]) await api.delete("/repos/:repo*/-/branch/:branch*/auto-merge", call);
          else await api.post("/repos/:repo*/-/branch/:branch*/auto-merge", call);
          // The routes answer 204, as the origin system's do; the branch says who enabled it.
          const b = await api.get("/repos/:repo*/-/branch/:branch*", call);
          out.done(
            b.auto_merge
              ? `${branch} will merge by itself, as ${b.auto_merge_by}, once its policies pass`
              : `auto-merge is off for ${branch}`,
            b,
          );
        },
      },
      {
        name: "delete <repo> <branch>",
        aliases: ["rm"],
        summary: "abandon a branch (its history stays)",
        run: async ({ client, out, args: [repo = "", branch = ""] }) => {
          await (await client()).delete("/repos/:repo*/-/branch/:branch*", { params: { repo, branch } });
          out.done(`deleted branch ${branch}`, { deleted: branch, repo });
        },
      },
    ],
  });

  resource(program, env, {
    name: "roles",
    aliases: ["role"],
    summary: "who may do what on a repo (admins)",
    verbs: [
      {
        name: "list <repo>",
        aliases: ["ls"],
        summary: "the repo's role assignments",
        run: async ({ client, out, args: [repo = ""] }) =>
          out.table((await (await client()).get("/repos/:repo*/-/roles", { params: { repo } })).roles, ROLE),
      },
      {
        name: "set <repo> <identity> <role>",
        aliases: ["grant"],
        summary: `give an identity a role: ${ROLES.join(", ")}`,
        run: async ({ client, out, args: [repo = "", identity = "", role = ""] }) => {
          if (!(ROLES as readonly string[]).includes(role))
            throw usageError(`'${role}' is not a role`, `use one of ${ROLES.join(", ")}`);
          const r = await (await client()).put("/repos/:repo*/-/roles/:identity", {
            params: { repo, identity },
            body: { role: role as (typeof ROLES)[number] },
          });
          out.done(`${identity} is ${r.role} on ${repo}`, r);
        },
      },
      {
        name: "remove <repo> <identity>",
        aliases: ["rm", "revoke"],
        summary: "take an identity's role away",
        run: async ({ client, out, args: [repo = "", identity = ""] }) => {
          await (await client()).delete("/repos/:repo*/-/roles/:identity", { params: { repo, identity } });
          out.done(`${identity} has no role on ${repo}`, { removed: identity, repo });
        },
      },
    ],
  });
}
