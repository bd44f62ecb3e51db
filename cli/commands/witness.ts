import { type Command, InvalidArgumentError } from "commander";
import { configDir } from "../auth/store.ts";
import type { CliEnv } from "../env.ts";
import { usageError } from "../errors.ts";
import { fetchLogGet, fetchLogPost } from "../transparency/contact.ts";
import { loadWitnessKey, witnessRepo, witnessState } from "../transparency/witness.ts";

const seconds = (v: string): number => {
  if (!/^\d{1,6}$/.test(v) || Number(v) < 1)
    throw new InvalidArgumentError("a whole number of seconds, at least 1");
  return Number(v);
};

/** `quire witness <repo>…` and `quire witness key` (docs/verifiable-history.md, "Witnesses"). */
export function register(program: Command, env: CliEnv): void {
  const dir = () => configDir(env.env);
  const witness = program
    .command("witness")
    .description(
      "Cosign repos' transparency-log checkpoints as a witness: verify each (log key, consistency with the last one cosigned), sign it with this machine's witness key, post the cosignature",
    )
    .argument("[repos...]", "repos to witness, as org/name")
    .option("--watch", "keep witnessing, every --interval seconds, until interrupted")
    .option("--interval <seconds>", "the pause between rounds with --watch", seconds, 60)
    .option("--name <name>", "the witness key's name, when this command creates it (default: <host>/witness)")
    .action(async (repos: string[], o: { watch?: boolean; interval: number; name?: string }) => {
      if (repos.length === 0)
        throw usageError("name at least one repo to witness", "quire witness <repo>... | quire witness key");
      const key = await loadWitnessKey(dir(), o.name);
      const server = await env.server();
      const headers = await identity(server);
      const io = { get: fetchLogGet(server, headers), post: fetchLogPost(server, headers) };
      const state = witnessState(dir());
      for (;;) {
        for (const repo of repos) {
          const r = await witnessRepo(io, state, key, server, repo);
          env.out.done(
            `cosigned ${r.origin} at size ${r.size} (root ${r.root})${r.previous_size === null ? ", first sight" : `, extends size ${r.previous_size}`}`,
            r,
          );
        }
        if (!o.watch) return;
        await new Promise((resolve) => setTimeout(resolve, o.interval * 1000));
      }
    });

  witness
    .command("key")
    .description(
      "Print this machine's witness verifier key (<name>+<hash>+<key>), creating the key at first use",
    )
    .option("--name <name>", "the key's name, when this command creates it (default: <host>/witness)")
    .action(async (o: { name?: string }) => {
      // `quire witness key --name N`: the parent command, which has --name too, parses it first.
      const name = o.name ?? (witness.opts() as { name?: string }).name;
      const key = await loadWitnessKey(dir(), name);
      if (env.out.json) env.out.writeJson({ name: key.name, vkey: key.vkey });
      else env.out.line(key.vkey);
    });

  const identity = async (server: string): Promise<Record<string, string>> => {
    const token = await env.token(server);
    const dev = env.devIdentity();
    return {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(dev ? { "x-quire-dev-identity": dev } : {}),
    };
  };
}
