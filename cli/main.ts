import { Command, CommanderError } from "commander";
import { commandModules } from "./commands/index.ts";
import { UsageArgError } from "./commands/resource.ts";
import { type CliEnv, createEnv, type EnvOptions } from "./env.ts";
import { EXIT, explain, usageError } from "./errors.ts";

/** The CLI's version (the package's). */
export const VERSION = "0.1.0";

/** The `quire` program with every command module registered. */
export function buildProgram(env: CliEnv, o: Pick<EnvOptions, "stdout" | "stderr">): Command {
  const program = new Command("quire")
    .description("Quire from the command line: repos, branches, reviews, merges, CI and a working copy")
    .version(VERSION, "-V, --version")
    .option("-s, --server <url>", "the server (default: QUIRE_SERVER, the working copy's, or the last login)")
    .option("--json", "print JSON (the API's own shapes) instead of tables")
    .option("--no-color", "no colour (NO_COLOR in the environment does the same)")
    .option(
      "--as <email>",
      "development servers only: act as this one of their DEV_IDENTITIES (default: QUIRE_AS)",
    )
    .showHelpAfterError("(add --help for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => o.stdout.write(s),
      writeErr: (s) => o.stderr.write(s),
    })
    .hook("preAction", (_program, action) => {
      Object.assign(env.flags, action.optsWithGlobals());
    });
  for (const register of commandModules) register(program, env);
  return program;
}

/** Runs one invocation; answers the exit code (0 ok, 1 refused or failed, 2 usage). */
export async function run(argv: string[], o: EnvOptions): Promise<number> {
  const env = createEnv(o);
  const program = buildProgram(env, o);
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version end the parse by throwing, with exit code 0; anything else is usage.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const server = await env.server().catch(() => env.flags.server);
    const e = explain(err instanceof UsageArgError ? usageError(err.message) : err, server, {
      quireToken: env.env["QUIRE_TOKEN"],
    });
    if (env.flags.json) o.stderr.write(`${JSON.stringify(e.json)}\n`);
    else {
      const c = env.out.c;
      o.stderr.write(`${c.red("error:")} ${e.message}\n`);
      if (e.hint) o.stderr.write(`${c.dim("hint:")} ${e.hint}\n`);
    }
    return e.exitCode;
  }
}
