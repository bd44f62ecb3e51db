import { z } from "zod";
import { checkNameProblem } from "../../checks/names.ts";
import { MAX_CHECK_SECRETS, secretNameProblem } from "../../repo-secrets/rules.ts";
import { cronProblem } from "./cron.ts";
import { type IfExpr, IfSyntaxError, parseIf } from "./expression.ts";
import { globProblem } from "./glob.ts";

/**
 * The shape of `.svc/ci.yaml` after YAML parsing (docs/ci-config.md). Field-local rules live
 * here; rules across checks (unique names, `needs`) are in parse.ts, so that one pass reports
 * them even when other fields are wrong.
 */

export const MAX_CHECKS = 100;
export const MAX_STEPS = 200;
export const MAX_SCHEDULES = 20;
export const MAX_PATTERNS = 100;
export const MAX_IMAGE_LENGTH = 500;

/** Which keys each mapping takes, by path shape (`[]` stands for a list index). */
export const knownKeys: Record<string, readonly string[]> = {
  "": ["on", "checks"],
  on: ["push", "proposal", "schedule", "manual"],
  "on.push": ["branches"],
  "on.proposal": ["base_branches"],
  "on.schedule.[]": ["cron"],
  "checks.[]": ["name", "image", "steps", "if", "needs", "secrets"],
};

/** A check as the scheduler runs it. */
export interface CiCheck {
  name: string;
  image: string;
  steps: string[];
  /** The `if:` text as written; "" when absent or empty. */
  if: string;
  /** `if` parsed; null means the check always runs. */
  condition: IfExpr | null;
  /** Stored, not enforced: all checks of a run start together. */
  needs: string[];
  /** The repo secrets the worker mounts at /run/secrets/NAME for this check (docs/secrets.md). */
  secrets: string[];
}

/** The trigger block, with every default applied. */
export interface CiOn {
  /** null: commits enqueue no push job. `branches: []` matches every branch. */
  push: { branches: string[] } | null;
  /** null: proposals enqueue no job. `base_branches: []` matches every base branch. */
  proposal: { base_branches: string[] } | null;
  schedule: { cron: string }[];
  /** Manual runs are always enabled, whatever the file says. */
  manual: true;
}

export interface CiConfig {
  on: CiOn;
  checks: CiCheck[];
}

/** Without an `on` block, CI runs on every commit to every branch (backward compatibility). */
export const DEFAULT_ON: CiOn = { push: { branches: [] }, proposal: null, schedule: [], manual: true };

/** `must be <what>` for a wrong type, `is required` for a missing key. */
function expected(what: string) {
  return {
    error: (issue: { code?: string; input?: unknown }) => {
      if (issue.code !== "invalid_type") return undefined;
      return issue.input === undefined ? "is required" : `must be ${what}, not ${kindOf(issue.input)}`;
    },
  };
}

/** How a YAML value reads to its author. */
export function kindOf(value: unknown): string {
  if (value === null) return "empty (null)";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "boolean") return `the boolean ${value}`;
  if (typeof value === "number") return `the number ${value}`;
  return `a ${typeof value}`;
}

/** A string checked by a `…Problem` function that says what is wrong, or null. */
function checked(problem: (s: string) => string | null, what = "a string") {
  return z.string(expected(what)).superRefine((s, ctx) => {
    const why = problem(s);
    if (why) ctx.addIssue({ code: "custom", message: why });
  });
}

/** A list that may be written empty (`key:`), read as []. */
function optionalList<T extends z.ZodType>(item: T, what: string, max: number) {
  return z
    .array(item, expected(what))
    .max(max, `must have at most ${max} entries`)
    .nullish()
    .transform((v) => v ?? []);
}

const patterns = optionalList(
  checked(globProblem, "a branch pattern string"),
  "a list of branch patterns",
  MAX_PATTERNS,
);

const push = z
  .strictObject({ branches: patterns }, expected("a mapping"))
  .nullable()
  .transform((v) => ({ branches: v?.branches ?? [] }));

const proposal = z
  .strictObject({ base_branches: patterns }, expected("a mapping"))
  .nullable()
  .transform((v) => ({ base_branches: v?.base_branches ?? [] }));

const schedule = z
  .array(z.strictObject({ cron: checked(cronProblem, "a cron string") }, expected("a mapping with 'cron'")), {
    ...expected("a list of {cron: ...} entries"),
  })
  .max(MAX_SCHEDULES, `must have at most ${MAX_SCHEDULES} entries`);

const manual = z.unknown().superRefine((v, ctx) => {
  const empty = v === null || v === true || (isPlainObject(v) && Object.keys(v).length === 0);
  if (!empty)
    ctx.addIssue({
      code: "custom",
      message: "takes no configuration (manual runs are always enabled); write 'manual:' or leave it out",
    });
});

const on = z
  .strictObject(
    {
      push: push.optional(),
      proposal: proposal.optional(),
      schedule: schedule.optional(),
      manual: manual.optional(),
    },
    expected("a mapping"),
  )
  .nullable()
  .transform(
    (v): CiOn => ({
      push: v?.push ?? null,
      proposal: v?.proposal ?? null,
      schedule: v?.schedule ?? [],
      manual: true,
    }),
  );

const condition = z
  .string(expected("a string"))
  .nullish()
  .transform((source, ctx) => {
    try {
      return { source: source ?? "", expr: parseIf(source ?? "") };
    } catch (err) {
      if (!(err instanceof IfSyntaxError)) throw err;
      ctx.addIssue({ code: "custom", message: err.message, params: { index: err.index } });
      return z.NEVER;
    }
  });

const check = z
  .strictObject(
    {
      name: checked(checkNameProblem),
      image: z
        .string(expected("a string"))
        .min(1, "must not be empty")
        .max(MAX_IMAGE_LENGTH, `must be at most ${MAX_IMAGE_LENGTH} characters`)
        .regex(/^\S*$/, "must not contain spaces"),
      steps: z
        .array(
          z.string(expected("a string")).refine((s) => s.trim() !== "", "must not be empty"),
          {
            ...expected("a list of shell commands"),
          },
        )
        .min(1, "must list at least one step")
        .max(MAX_STEPS, `must have at most ${MAX_STEPS} steps`),
      if: condition,
      needs: optionalList(z.string(expected("a check name")), "a list of check names", MAX_CHECKS),
      secrets: optionalList(
        checked(secretNameProblem, "a secret name"),
        "a list of secret names",
        MAX_CHECK_SECRETS,
      ).refine((names) => new Set(names).size === names.length, "must not name a secret twice"),
    },
    expected("a mapping with name, image and steps"),
  )
  .transform(
    (c): CiCheck => ({
      name: c.name,
      image: c.image,
      steps: c.steps,
      if: c.if.source,
      condition: c.if.expr,
      needs: c.needs,
      secrets: c.secrets,
    }),
  );

/** The whole file. */
export const ciFileSchema = z
  .strictObject(
    {
      on: on.optional(),
      checks: z
        .array(check, expected("a list of checks"))
        .min(1, "must list at least one check")
        .max(MAX_CHECKS, `must have at most ${MAX_CHECKS} checks`),
    },
    expected("a mapping with 'checks' (and optionally 'on')"),
  )
  .transform(
    (f): CiConfig => ({ on: f.on === undefined ? structuredClone(DEFAULT_ON) : f.on, checks: f.checks }),
  );

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
