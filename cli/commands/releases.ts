import type { Command } from "commander";
import type { CliEnv } from "../env.ts";
import { usageError } from "../errors.ts";
import type { Column } from "../output.ts";
import { resource } from "./resource.ts";

interface Release {
  name: string;
  sequence: number;
  notes: string;
  created_at: string;
  created_by: string;
}
const RELEASE: Column<Release>[] = [
  { header: "name", value: (r) => r.name },
  { header: "sequence", value: (r) => r.sequence },
  { header: "notes", value: (r) => r.notes },
  { header: "by", value: (r) => r.created_by },
  { header: "created", value: (r) => r.created_at, kind: "time" },
];

/** `quire releases` and `quire purge`. */
export function register(program: Command, env: CliEnv): void {
  resource(program, env, {
    name: "releases",
    aliases: ["release"],
    summary: "named sequences of main",
    verbs: [
      {
        name: "list <repo>",
        aliases: ["ls"],
        summary: "the repo's releases, newest first",
        run: async ({ client, out, args: [repo = ""] }) =>
          out.table(
            (await (await client()).get("/repos/:repo*/-/releases", { params: { repo } })).releases,
            RELEASE,
          ),
      },
      {
        name: "view <repo> <name>",
        summary: "one release",
        run: async ({ client, out, args: [repo = "", name = ""] }) =>
          out.record(
            await (await client()).get("/repos/:repo*/-/releases/:release_name", {
              params: { repo, release_name: name },
            }),
            RELEASE,
          ),
      },
      {
        name: "create <repo> <name> <sequence>",
        summary: "name a sequence of main (maintainers)",
        options: [{ flags: "-n, --notes <text>", description: "release notes", default: "" }],
        run: async ({ client, out, args: [repo = "", name = "", sequence = ""], opts }) => {
          if (!/^\d+$/.test(sequence)) throw usageError(`sequence must be a whole number, got '${sequence}'`);
          const r = await (await client()).post("/repos/:repo*/-/releases", {
            params: { repo },
            body: { name, sequence: Number(sequence), notes: opts["notes"] as string },
          });
          out.done(`released ${r.name} at ${r.sequence}`, r);
        },
      },
      {
        name: "delete <repo> <name>",
        aliases: ["rm"],
        summary: "delete a release (admins)",
        run: async ({ client, out, args: [repo = "", name = ""] }) => {
          await (await client()).delete("/repos/:repo*/-/releases/:release_name", {
            params: { repo, release_name: name },
          });
          out.done(`deleted release ${name}`, { deleted: name, repo });
        },
      },
    ],
  });

  const purge = program
    .command("purge <repo>")
    .description("delete merged and abandoned branches and their commits older than a cutoff (admins)")
    .requiredOption("--older-than <duration>", "the cutoff's age, e.g. 30d, 12h")
    .option("--dry-run", "say what would go, delete nothing");
  purge.action(async (repo: string, opts: { olderThan: string; dryRun?: boolean }) => {
    const client = await env.client();
    const r = await client.post("/repos/:repo*/-/purge", {
      params: { repo },
      body: { older_than: opts.olderThan, dry_run: opts.dryRun === true },
    });
    const out = env.out;
    if (out.json) return out.writeJson(r);
    const verb = r.dry_run ? "would delete" : "deleted";
    out.line(
      `${r.dry_run ? out.c.yellow("dry run: ") : ""}${verb} ${r.branches.length} branches, ${r.commits} commits, ` +
        `${r.file_changes} file changes, ${r.contents} contents (${r.bytes} bytes) older than ${r.cutoff}`,
    );
    if (r.branches.length > 0)
      out.table(r.branches, [
        { header: "branch", value: (b) => b.name },
        { header: "status", value: (b) => b.status, kind: "state" },
        { header: "closed", value: (b) => b.closed_at, kind: "time" },
      ]);
  });
}
