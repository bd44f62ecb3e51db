import type { Command } from "commander";
import type { CliEnv } from "../env.ts";
import { usageError } from "../errors.ts";
import type { Column } from "../output.ts";
import { resource, UsageArgError } from "./resource.ts";

interface Repo {
  name: string;
  owner: string;
  created_at: string;
  created_by: string;
}
const REPO: Column<Repo>[] = [
  { header: "name", value: (r) => r.name },
  { header: "owner", value: (r) => r.owner },
  { header: "created", value: (r) => r.created_at, kind: "time" },
  { header: "by", value: (r) => r.created_by },
];

/** `quire repos`. */
export function register(program: Command, env: CliEnv): void {
  resource(program, env, {
    name: "repos",
    aliases: ["repo"],
    summary: "repositories (`org/name`, the name may hold more slashes)",
    verbs: [
      {
        name: "list",
        aliases: ["ls"],
        summary: "the repos you may read",
        run: async ({ client, out }) => out.table((await (await client()).get("/repos")).repos, REPO),
      },
      {
        name: "view <repo>",
        summary: "one repo",
        run: async ({ client, out, args: [repo = ""] }) =>
          out.record(await (await client()).get("/repos/:repo*", { params: { repo } }), REPO),
      },
      {
        name: "create <repo>",
        summary: "create a repo `org/name` in an org you belong to",
        run: async ({ client, out, args: [name = ""] }) => {
          const owner = name.split("/")[0] ?? "";
          if (!name.includes("/")) throw new UsageArgError(`'${name}' names no org: write it as org/name`);
          const repo = await (await client()).post("/repos", { body: { owner, name } });
          out.done(`created repo ${repo.name}`, repo);
        },
      },
      {
        name: "delete <repo>",
        summary: "delete a repo and its history (admins)",
        options: [{ flags: "--yes", description: "confirm: the history cannot be recovered" }],
        run: async ({ client, out, args: [repo = ""], opts }) => {
          if (!opts["yes"])
            throw usageError(`deleting ${repo} removes its whole history`, "run again with --yes to confirm");
          await (await client()).delete("/repos/:repo*", { params: { repo } });
          out.done(`deleted repo ${repo}`, { deleted: repo });
        },
      },
    ],
  });
}
