import type { Command } from "commander";
import type { QuireClient } from "../client/index.ts";
import type { CliEnv } from "../env.ts";
import type { Output } from "../output.ts";

/*
 * Resources are tables: each verb is a row with its arguments, options and what it does, and
 * `resource()` turns the table into `quire <resource> <verb>` commands. A new verb is a new row.
 */

/** One option of a verb, in commander's syntax (`--state <state>`, `--dry-run`). */
export interface Opt {
  flags: string;
  description: string;
  default?: string | boolean;
  /** The only values accepted (checked by commander: a usage error otherwise). */
  choices?: readonly string[];
  required?: boolean;
}

/** What a verb's `run` gets. */
export interface VerbCall {
  env: CliEnv;
  out: Output;
  /** The positional arguments, in the order the verb declares them (variadic ones as arrays). */
  args: string[];
  /** Its options, by their camelCase names. */
  opts: Record<string, unknown>;
  /** A client of the resolved server (resolved on first use, so `--help` needs no server). */
  client(): Promise<QuireClient>;
}

export interface Verb {
  /** The verb and its arguments, e.g. `create <repo> <name>`. */
  name: string;
  summary: string;
  aliases?: string[];
  options?: Opt[];
  run(call: VerbCall): Promise<void>;
}

export interface ResourceSpec {
  name: string;
  aliases?: string[];
  summary: string;
  verbs: Verb[];
}

/** Adds `quire <name> <verb>` for each verb of the table. */
export function resource(program: Command, env: CliEnv, spec: ResourceSpec): Command {
  const parent = program.command(spec.name).description(spec.summary);
  for (const a of spec.aliases ?? []) parent.alias(a);
  for (const verb of spec.verbs) addVerb(parent, env, verb);
  return parent;
}

/** Adds one verb as a subcommand of `parent`. */
export function addVerb(parent: Command, env: CliEnv, verb: Verb): Command {
  const cmd = parent.command(verb.name).description(verb.summary);
  for (const a of verb.aliases ?? []) cmd.alias(a);
  for (const o of verb.options ?? []) {
    if (o.choices) {
      const opt = cmd.createOption(o.flags, o.description).choices(o.choices);
      if (o.default !== undefined) opt.default(o.default);
      if (o.required) opt.makeOptionMandatory();
      cmd.addOption(opt);
    } else if (o.required) cmd.requiredOption(o.flags, o.description, o.default as string);
    else cmd.option(o.flags, o.description, o.default as string);
  }
  cmd.action(async (...all: unknown[]) => {
    const command = all.at(-1) as Command;
    const args = all.slice(0, command.registeredArguments.length) as string[];
    await verb.run({ env, out: env.out, args, opts: command.opts(), client: () => env.client() });
  });
  return cmd;
}

/** Thrown for a bad argument value: the CLI exits 2 with this message. */
export class UsageArgError extends Error {
  override name = "UsageArgError";
}
