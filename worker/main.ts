import { createCheckRunner } from "./check/runner.ts";
import { runWorkerProcess } from "./process.ts";

/**
 * `npm run worker [-- --once]`: the CI worker (docs/ci-worker.md). Claims jobs from the scheduler
 * and runs their checks in the bubblewrap sandbox; configured from the environment.
 */
process.exitCode = await runWorkerProcess(process.argv.slice(2), createCheckRunner);
