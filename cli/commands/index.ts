import type { Command } from "commander";
import type { CliEnv } from "../env.ts";
import * as archive from "./archive.ts";
import * as auth from "./auth.ts";
import * as branches from "./branches.ts";
import * as ci from "./ci.ts";
import * as events from "./events.ts";
import * as gitPort from "./git.ts";
import * as issues from "./issues.ts";
import * as open from "./open.ts";
import * as orgs from "./orgs.ts";
import * as releases from "./releases.ts";
import * as repos from "./repos.ts";
import * as review from "./review.ts";
import * as secrets from "./secrets.ts";
import * as subscriptions from "./subscriptions.ts";
import * as witness from "./witness.ts";
import * as workcopy from "./workcopy.ts";

/** A command module: adds its commands to the program. */
export type Register = (program: Command, env: CliEnv) => void;

/** Every command module, in the order `quire --help` lists them. */
export const commandModules: Register[] = [
  auth.register,
  orgs.register,
  repos.register,
  branches.register,
  review.register,
  issues.register,
  releases.register,
  ci.register,
  secrets.register,
  archive.register,
  events.register,
  subscriptions.register,
  workcopy.register,
  witness.register,
  gitPort.register,
  open.register,
];
