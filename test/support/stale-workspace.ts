import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const WORKSPACE = fileURLToPath(new URL("../../worker/sandbox/workspace.ts", import.meta.url));

/**
 * A check's copy of `sourceDir` in `stagingDir`, as a worker killed outright in the middle of a
 * check leaves it: made by a real process (our own code), which then dies of SIGKILL.
 */
export async function copyLeftByKilledProcess(stagingDir: string, sourceDir: string): Promise<string> {
  const input = { sourceDir, stagingDir, jobToken: "", network: "none" };
  const script = `
    const { createWorkspace } = await import(${JSON.stringify(WORKSPACE)});
    const workspace = await createWorkspace(${JSON.stringify(input)});
    process.stdout.write(workspace.src, () => process.kill(process.pid, "SIGKILL"));
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
  if (signal !== "SIGKILL" || out === "")
    throw new Error(`the copying process did not die as planned: ${err}`);
  return out;
}
