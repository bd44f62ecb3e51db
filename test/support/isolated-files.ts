/**
 * The server test files that run each in a process of its own: the `isolated` project in
 * vitest.config.ts. Every other server file shares its worker process, and the modules it
 * loaded, with the files before it (docs/testing.md, "Running in parallel"): loading the app's
 * modules once per worker rather than once per file halves the suite's CPU time.
 *
 * A file belongs here when what it does outlives it in the process, as test/fast/isolation.test.ts
 * checks: it imports functions/index.ts (which registers the cloud functions with the framework
 * for good, reads the environment once, and wraps `http.createServer` for the framework's servers),
 * writes `process.env`, or fakes the timers.
 */
export const ISOLATED_FILES = [
  "test/blobs/gcs.test.ts",
  "test/ci/scheduler/functions.test.ts",
  "test/ci/scheduler/timers.test.ts",
  "test/ci/worker/worker-identity.test.ts",
  "test/platform/cloud-sql.test.ts",
  "test/platform/functions-start.test.ts",
  "test/platform/functions.test.ts",
  "test/platform/internal-oidc.test.ts",
  "test/platform/migrate-step.test.ts",
  "test/worker/sandbox.test.ts",
];
