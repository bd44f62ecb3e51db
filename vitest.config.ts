import { configDefaults, defineConfig } from "vitest/config";
import { ISOLATED_FILES } from "./test/support/isolated-files.ts";

/**
 * Four projects. `npm test` runs three: `fast` is the kernel and the checks of generated files,
 * with no PostgreSQL and no server (`npm run test:fast` runs it alone, in seconds); `server` is
 * everything else, over real HTTP against the PostgreSQL cluster the global setup starts, but for
 * the few files of `isolated`, which change what their process holds for good
 * (test/support/isolated-files.ts). `rehearsal` is the deployment rehearsal (`npm run rehearse`,
 * docs/deploy.md), a tier of its own.
 *
 * Files run three at a time (vitest's default on two cores would be one): most of a server test's
 * time is spent waiting on PostgreSQL, HTTP and child processes, so three files keep two cores
 * busy. A server file shares its worker process with the files before it (`isolate: false`): the
 * app's modules load once per worker, not once per file, which halves the suite's CPU time; an
 * isolated file gets a process of its own (docs/testing.md, "Running in parallel"). A test may
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
          isolate: false,
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/fast/**", "test/rehearsal/**", ...ISOLATED_FILES],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: { name: "isolated", include: ISOLATED_FILES, globalSetup: ["test/support/global-setup.ts"] },
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
