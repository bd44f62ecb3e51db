/**
 * What the scheduler knows of `.svc/ci.yaml` without parsing it: where it is, its size limit, and
 * how its problems are reported. Parsing (parse.ts: the yaml package, the schema, cron-parser
 * and picomatch) is imported only once a branch has the file (shared/ci/scheduler/config-at.ts),
 * so a server whose repos use no CI never loads it (docs/benchmarks.md, "Where the memory goes").
 */

/** Where the configuration lives on the branch under test. */
export const CI_CONFIG_PATH = ".svc/ci.yaml";

/**
 * The check run the scheduler posts, failed, when the file is invalid: no job is queued and the
 * author reads why in this run (see `describeConfigErrors`).
 */
export const CONFIG_ERROR_CHECK = "ci/config";

/** Largest file parsed; a configuration is a few hundred lines. */
export const MAX_CONFIG_BYTES = 256 * 1024;

/** One problem in the file; `line` and `column` are 1-based and point at the offending node. */
export interface ConfigError {
  message: string;
  line?: number;
  column?: number;
}

/** The errors as one text for the failed check run's log, one `path:line:column: message` per line. */
export function describeConfigErrors(errors: readonly ConfigError[], path = CI_CONFIG_PATH): string {
  return errors
    .map((e) =>
      e.line === undefined ? `${path}: ${e.message}` : `${path}:${e.line}:${e.column}: ${e.message}`,
    )
    .join("\n");
}
