#!/usr/bin/env node
import { run } from "./main.ts";

// The executable: runs with the process's own environment and streams, and exits with the code.
process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
});
