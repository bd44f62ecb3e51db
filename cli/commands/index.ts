import type { Command } from "commander";
import type { CliEnv } from "../env.ts";
import * as orgs from "./orgs.ts";
import * as repos from "./repos.ts";
import * as workcopy from "./workcopy.ts";

/** A command module: adds its commands to the program. */
export type Register = (program: Command, env: CliEnv) => void;

/** Every command module, in the order `quire --help` lists them. */
export const commandModules: Register[] = [orgs.register, repos.register, workcopy.register];
