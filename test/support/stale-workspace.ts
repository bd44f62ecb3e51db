import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const WORKSPACE = fileURLToPath(new URL("../../worker/sandbox/workspace.ts", import.meta.url));
const OWNED = fileURLToPath(new URL("../../worker/owned-directory.ts", import.meta.url));

/**
 * What a worker killed outright in the middle of a check leaves in `stagingDir`: the job's
 * directory and the check's copy of `sourceDir`, made by a real process (our own code), which
 * then dies of SIGKILL. Returns both paths.
 */
export async function leftByKilledProcess(
  stagingDir: string,
  sourceDir: string,
): Promise<{ job: string; copy: string }> {
  const input = { sourceDir, stagingDir, jobToken: "", network: "none" };
  const script = `
    const { createWorkspace } = await import(${JSON.stringify(WORKSPACE)});
    const { createOwnedDirectory } = await import(${JSON.stringify(OWNED)});
    const job = await createOwnedDirectory(${JSON.stringify(stagingDir)}, "quire-job-");
    const workspace = await createWorkspace(${JSON.stringify(input)});
    const paths = JSON.stringify({ job: job.path, copy: workspace.src });
    process.stdout.write(paths, () => process.kill(process.pid, "SIGKILL"));
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, sig) => resolve(sig)),
  );
  if (signal !== "SIGKILL" || out === "") throw new Error(`the process did not die as planned: ${err}`);
  return JSON.parse(out) as { job: string; copy: string };
}
