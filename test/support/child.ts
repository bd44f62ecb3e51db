import type { ChildProcess, StdioOptions } from "node:child_process";

/**
 * Waits until a Quire started as a child process says it is listening (on stdout or stderr), and
 * fails with everything it printed if it exits first or takes over a minute. The child is killed
 * if the test process exits before it does.
 */
export async function untilListening(child: ChildProcess, what = "child server"): Promise<void> {
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("quire is listening")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}): ${output}`));
    });
  });
}

/**
 * stdin ignored, stdout and stderr piped, and the `inherit` descriptors at their numbers in the
 * child (`{40: fd}`): how the sandbox tests leave host files open in a worker or the CLI.
 */
export function stdioWith(inherit: Record<number, number> = {}): StdioOptions {
  const stdio: StdioOptions = ["ignore", "pipe", "pipe"];
  for (const [at, fd] of Object.entries(inherit)) {
    while (stdio.length < Number(at)) stdio.push("ignore");
    stdio[Number(at)] = fd;
  }
  return stdio;
}
