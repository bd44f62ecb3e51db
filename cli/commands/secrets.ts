import type { Command } from "commander";
import type { SecretResponse } from "../../shared/api/secrets.ts";
import { MAX_SECRET_BYTES } from "../../shared/repo-secrets/rules.ts";
import type { CliEnv } from "../env.ts";
import { usageError } from "../errors.ts";
import type { Column } from "../output.ts";
import { resource } from "./resource.ts";

const SECRET: Column<SecretResponse>[] = [
  { header: "name", value: (s) => s.name },
  { header: "description", value: (s) => s.description },
  { header: "bytes", value: (s) => s.size_bytes },
  { header: "set by", value: (s) => s.set_by },
  { header: "set", value: (s) => s.set_at, kind: "time" },
];

const FROM_STDIN = "printf '%s' \"$VALUE\" | quire secrets set NAME -";

/**
 * The value, from standard input only: never an argument, which shell history, `ps` and audit
 * logs keep. The bytes as given (no newline is stripped); refused from a terminal, which would
 * show it as it is typed.
 */
async function valueFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw usageError("the value comes from standard input; pipe it in", FROM_STDIN);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size > MAX_SECRET_BYTES) throw usageError(`the value is over ${MAX_SECRET_BYTES} bytes (64 KiB)`);
  }
  const bytes = Buffer.concat(chunks);
  if (bytes.length === 0) throw usageError("the value on standard input is empty", FROM_STDIN);
  const value = bytes.toString("utf8");
  if (!Buffer.from(value, "utf8").equals(bytes))
    throw usageError("the value is not UTF-8 text; encode a binary value first (base64)");
  return value;
}

/** `quire secrets`: a repo's secrets for CI (docs/secrets.md). */
export function register(program: Command, env: CliEnv): void {
  resource(program, env, {
    name: "secrets",
    aliases: ["secret"],
    summary: "the repo's secrets for CI checks (values are never shown)",
    verbs: [
      {
        name: "list [repo]",
        aliases: ["ls"],
        summary: "names, descriptions and who set each (readers)",
        fromCopy: ["repo"],
        run: async ({ client, out, args: [repo = ""] }) =>
          out.table(
            (await (await client()).get("/repos/:repo*/-/secrets", { params: { repo } })).secrets,
            SECRET,
          ),
      },
      {
        name: "set [repo] [name] [source]",
        summary: "create or replace a secret, its value read from standard input: '-' (admins)",
        fromCopy: ["repo"],
        options: [{ flags: "-d, --description <text>", description: "what the secret is for" }],
        run: async ({ client, out, args: [repo = "", name = "", source = ""], opts }) => {
          if (source !== "-")
            throw usageError(
              "a secret's value is read from standard input only: give '-' as its source",
              FROM_STDIN,
            );
          const value = await valueFromStdin();
          const description = opts["description"] as string | undefined;
          const s = await (await client()).put("/repos/:repo*/-/secrets/:secret", {
            params: { repo, secret: name },
            body: description === undefined ? { value } : { value, description },
          });
          out.done(`set secret ${s.name} of ${repo} (${s.size_bytes} bytes)`, s);
        },
      },
      {
        name: "delete [repo] [name]",
        aliases: ["rm", "unset"],
        summary: "delete a secret (admins)",
        fromCopy: ["repo"],
        run: async ({ client, out, args: [repo = "", name = ""] }) => {
          await (await client()).delete("/repos/:repo*/-/secrets/:secret", {
            params: { repo, secret: name },
          });
          out.done(`deleted secret ${name} of ${repo}`, { deleted: name, repo });
        },
      },
    ],
  });
}
