import type { Command } from "commander";
import { commaList } from "../../shared/api/comma-list.ts";
import type { IssueResponse } from "../../shared/api/issues.ts";
import { ISSUE_PAGE } from "../../shared/issues/page.ts";
import type { CliEnv } from "../env.ts";
import { usageError } from "../errors.ts";
import type { Column } from "../output.ts";
import { resource } from "./resource.ts";

const ISSUE: Column<IssueResponse>[] = [
  { header: "#", value: (i) => i.number },
  { header: "title", value: (i) => i.title },
  { header: "state", value: (i) => i.state, kind: "state" },
  { header: "labels", value: (i) => i.labels.join(",") },
  { header: "assignees", value: (i) => i.assignees.join(",") },
  { header: "author", value: (i) => i.author },
  { header: "updated", value: (i) => i.updated_at, kind: "time" },
];

/** `--label a,b` as the API's list; absent stays absent. */
const list = (value: unknown): string[] | undefined =>
  typeof value === "string" ? commaList(value) : undefined;

/** The body fields an `open` or `edit` was given. */
function issueFields(opts: Record<string, unknown>) {
  const labels = list(opts["label"]);
  const assignees = list(opts["assignee"]);
  return {
    ...(opts["title"] !== undefined ? { title: opts["title"] as string } : {}),
    ...(opts["body"] !== undefined ? { body: opts["body"] as string } : {}),
    ...(labels ? { labels } : {}),
    ...(assignees ? { assignees } : {}),
  };
}

const fieldOptions = [
  { flags: "-b, --body <text>", description: "the description, in Markdown" },
  { flags: "-l, --label <labels>", description: "labels, comma-separated" },
  { flags: "-a, --assignee <identities>", description: "assignees, comma-separated" },
];

/** `quire issues` (docs/issues.md): the repo's issues by their `#n`. */
export function register(program: Command, env: CliEnv): void {
  resource(program, env, {
    name: "issues",
    aliases: ["issue"],
    summary: "a repo's issues and their comments",
    verbs: [
      {
        name: "list [repo]",
        aliases: ["ls"],
        summary: "the repo's issues, newest first (open ones unless --state says otherwise)",
        fromCopy: ["repo"],
        options: [
          {
            flags: "--state <state>",
            description: "open, closed or all",
            choices: ["open", "closed", "all"],
          },
          { flags: "--label <label>", description: "only those with this label" },
          { flags: "--assignee <identity>", description: "only those assigned to this identity" },
          { flags: "--author <identity>", description: "only those opened by this identity" },
          { flags: "--limit <n>", description: "at most this many (default 50)" },
        ],
        run: async ({ client, out, args: [repo = ""], opts }) => {
          // The API answers every issue without a limit (as the origin system does); a terminal
          // wants a page.
          const query = Object.fromEntries(
            ["state", "label", "assignee", "author", "limit"].flatMap((k) =>
              opts[k] === undefined ? [] : [[k, String(opts[k])]],
            ),
          );
          query.limit ??= String(ISSUE_PAGE);
          const res = await (await client()).get("/repos/:repo*/-/issues", { params: { repo }, query });
          out.table(res.issues, ISSUE);
        },
      },
      {
        name: "view [repo] <number>",
        summary: "one issue, with its body and comments",
        fromCopy: ["repo"],
        run: async ({ client, out, args: [repo = "", number = ""] }) => {
          const c = await client();
          const params = { repo, number };
          const issue = await c.get("/repos/:repo*/-/issues/:number", { params });
          const { comments } = await c.get("/repos/:repo*/-/issues/:number/comments", { params });
          out.record({ ...issue, comments }, [
            ...ISSUE,
            { header: "body", value: (i) => i.body },
            {
              header: "comments",
              value: (i) => i.comments.map((m) => `\n  ${m.author}: ${m.body}`).join(""),
            },
          ]);
        },
      },
      {
        name: "open [repo]",
        aliases: ["create"],
        summary: "open an issue",
        fromCopy: ["repo"],
        options: [
          { flags: "-t, --title <title>", description: "its title", required: true },
          ...fieldOptions,
        ],
        run: async ({ client, out, args: [repo = ""], opts }) => {
          const i = await (await client()).post("/repos/:repo*/-/issues", {
            params: { repo },
            body: { title: opts["title"] as string, ...issueFields(opts) },
          });
          out.done(`opened issue #${i.number}: ${i.title}`, i);
        },
      },
      {
        name: "edit [repo] <number>",
        summary: "change an issue's title, body, labels or assignees",
        fromCopy: ["repo"],
        options: [{ flags: "-t, --title <title>", description: "new title" }, ...fieldOptions],
        run: async ({ client, out, args: [repo = "", number = ""], opts }) => {
          const i = await (await client()).patch("/repos/:repo*/-/issues/:number", {
            params: { repo, number },
            body: issueFields(opts),
          });
          out.done(`updated issue #${i.number}`, i);
        },
      },
      {
        name: "comment [repo] <number>",
        summary: "comment on an issue",
        fromCopy: ["repo"],
        options: [{ flags: "-m, --body <text>", description: "what you say, in Markdown", required: true }],
        run: async ({ client, out, args: [repo = "", number = ""], opts }) => {
          const c = await (await client()).post("/repos/:repo*/-/issues/:number/comments", {
            params: { repo, number },
            body: { body: opts["body"] as string },
          });
          out.done(`commented on issue #${number}`, c);
        },
      },
      {
        name: "close [repo] <number>",
        summary: "close an issue",
        fromCopy: ["repo"],
        options: [
          {
            flags: "--reason <reason>",
            description: "why",
            choices: ["completed", "not_planned", "duplicate"],
            default: "completed",
          },
        ],
        run: async ({ client, out, args: [repo = "", number = ""], opts }) => {
          const reason = opts["reason"] as "completed" | "not_planned" | "duplicate";
          const i = await (await client()).post("/repos/:repo*/-/issues/:number/close", {
            params: { repo, number },
            body: { reason },
          });
          out.done(`closed issue #${i.number} (${reason})`, i);
        },
      },
      {
        name: "link [repo] <number>",
        summary: "link an issue by hand to a commit or a proposal (one that does not write #n)",
        fromCopy: ["repo"],
        options: [
          { flags: "--commit <sequence>", description: "the commit, by its sequence" },
          { flags: "--proposal <id>", description: "the proposal, by its id" },
        ],
        run: async ({ client, out, args: [repo = "", number = ""], opts }) => {
          const commit = opts["commit"] as string | undefined;
          const proposal = opts["proposal"] as string | undefined;
          if ((commit === undefined) === (proposal === undefined))
            throw usageError("name one target: --commit <sequence> or --proposal <id>");
          const body =
            commit !== undefined
              ? { ref_type: "commit" as const, ref_id: commit }
              : { ref_type: "proposal" as const, ref_id: proposal ?? "" };
          const ref = await (await client()).post("/repos/:repo*/-/issues/:number/refs", {
            params: { repo, number },
            body,
          });
          out.done(`linked issue #${number} to ${ref.ref_type} ${ref.ref_id}`, ref);
        },
      },
      {
        name: "reopen [repo] <number>",
        summary: "reopen a closed issue",
        fromCopy: ["repo"],
        run: async ({ client, out, args: [repo = "", number = ""] }) => {
          const i = await (await client()).post("/repos/:repo*/-/issues/:number/reopen", {
            params: { repo, number },
            body: {},
          });
          out.done(`reopened issue #${i.number}`, i);
        },
      },
    ],
  });
}
