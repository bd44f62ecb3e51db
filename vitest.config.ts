import { configDefaults, defineConfig } from "vitest/config";

/**
 * Three projects. `npm test` runs two: `fast` is the kernel and the checks of generated files,
 * with no PostgreSQL and no server (`npm run test:fast` runs it alone, in seconds); `server` is
 * everything else, over real HTTP against the PostgreSQL cluster its global setup starts.
 * `rehearsal` is the deployment rehearsal (`npm run rehearse`, docs/deploy.md), a tier of its own.
 *
 * Files run three at a time (vitest's default on two cores would be one): most of a server test's
 * time is spent waiting on PostgreSQL, HTTP and child processes, so three files keep two cores
 * busy. Files are isolated from one another (docs/testing.md, "Running in parallel"). A test may
 * take a minute before it counts as hung: sharing the cores, a long one takes half again as long.
 */
export default defineConfig({
  test: {
    pool: "forks",
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "fast", include: ["test/fast/**/*.test.ts"] } },
      {
        extends: true,
        test: {
          name: "server",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/fast/**", "test/rehearsal/**"],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "rehearsal",
          include: ["test/rehearsal/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
    ],
  },
});
