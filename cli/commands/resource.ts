import type { Command } from "commander";
import type { QuireClient } from "../client/index.ts";
import type { CliEnv } from "../env.ts";
import { usageError } from "../errors.ts";
import type { Output } from "../output.ts";
import { findCopyRoot, readConfig } from "../workcopy/meta.ts";

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
  /**
   * The leading arguments a working copy can stand for, in order (`repo`, then `branch`): inside
   * one they may be left out, and the arguments given fill the last places. Such a verb writes
   * every argument optional (`[repo] [branch] [path]`); the ones after these are still required.
   */
  fromCopy?: readonly ("repo" | "branch")[];
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
    let args = all.slice(0, command.registeredArguments.length) as (string | undefined)[];
    if (verb.fromCopy) args = await fillFromCopy(env.cwd, command, args, verb.fromCopy);
    await verb.run({
      env,
      out: env.out,
      args: args as string[],
      opts: command.opts(),
      client: () => env.client(),
    });
  });
  return cmd;
}

/**
 * `quire reviews approve` inside a working copy means its repo and branch; `quire reviews approve
 * feature/x` that branch of its repo. The arguments given are the last ones; the missing leading
 * ones come from the copy's `.quire/copy.json`.
 */
async function fillFromCopy(
  cwd: string,
  command: Command,
  args: (string | undefined)[],
  fromCopy: readonly ("repo" | "branch")[],
): Promise<string[]> {
  const given = args.filter((a): a is string => a !== undefined);
  const names = command.registeredArguments.map((a) => a.name());
  const missing = names.length - given.length;
  if (missing === 0) return given;
  const usage = `quire ${command.parent?.name()} ${command.name()} ${names.map((n) => `<${n}>`).join(" ")}`;
  // A copy fills the first places; any other missing one must be given.
  if (missing > fromCopy.length)
    throw usageError(
      `missing ${names
        .slice(fromCopy.length, missing)
        .map((n) => `<${n}>`)
        .join(" ")}`,
      usage,
    );
  const copy = await findCopyRoot(cwd).then(readConfig, () => undefined);
  if (copy === undefined)
    throw usageError(
      `missing ${names
        .slice(0, missing)
        .map((n) => `<${n}>`)
        .join(" ")}: not inside a working copy`,
      `${usage}, or run it inside a working copy (quire clone)`,
    );
  return [...fromCopy.slice(0, missing).map((field) => copy[field]), ...given];
}

/** Thrown for a bad argument value: the CLI exits 2 with this message. */
export class UsageArgError extends Error {
  override name = "UsageArgError";
}
