import { spawn } from "node:child_process";
import type { SecretFile } from "../check/types.ts";
import { SECCOMP_SUPPORTED, seccompProgram } from "./seccomp.ts";
import { SECRETS_DIRECTORY, TOKEN_DIRECTORY, TOKEN_PATH, type Workspace } from "./workspace.ts";

/** What one sandboxed process is given. */
export interface SandboxSpec {
  /** The image's root filesystem, mounted read-only at /. */
  rootfs: string;
  workspace: Workspace;
  network: "none" | "on";
  /** The whole environment of the step; nothing of the worker's leaks in (set with `--setenv`). */
  env: Record<string, string>;
}

/** The step's environment as bubblewrap options: bwrap itself starts with an empty one. */
function environmentOptions(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([name, value]) => ["--setenv", name, value]);
}

/**
 * bubblewrap's options for one step. Every namespace is new (mount, PID, IPC, UTS, network,
 * user, cgroup), except the network one when the operator turned the network on. Inside, the step
 * is root of its own user namespace with every capability dropped, so it cannot remount the
 * read-only root, and it cannot create further user namespaces (less kernel surface for escapes).
 * `--die-with-parent` ties the sandbox's life to the worker: if the worker dies, so does the check.
 */
export function bwrapOptions(spec: SandboxSpec): string[] {
  const { workspace } = spec;
  return [
    "--unshare-all",
    ...(spec.network === "on" ? ["--share-net"] : []),
    "--unshare-user",
    "--disable-userns",
    "--uid",
    "0",
    "--gid",
    "0",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "quire-check",
    "--ro-bind",
    spec.rootfs,
    "/",
    "--bind",
    workspace.src,
    "/src",
    // The token, hosts and resolv.conf from pipes into bwrap's own tmpfs: no host path behind them.
    "--tmpfs",
    TOKEN_DIRECTORY,
    "--perms",
    "0444",
    "--ro-bind-data",
    String(TOKEN_FD),
    TOKEN_PATH,
    "--remount-ro",
    TOKEN_DIRECTORY,
    ...secretMounts(workspace.secrets),
    "--perms",
    "0444",
    "--ro-bind-data",
    String(HOSTS_FD),
    "/etc/hosts",
    "--perms",
    "0444",
    "--ro-bind-data",
    String(RESOLV_CONF_FD),
    "/etc/resolv.conf",
    "--tmpfs",
    "/tmp",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--chdir",
    "/src",
    ...(SECCOMP_SUPPORTED ? ["--seccomp", String(SECCOMP_FD)] : []),
    ...environmentOptions(spec.env),
  ];
}

/**
 * The repo secrets the check lists (docs/secrets.md), each a read-only file /run/secrets/NAME
 * written by bwrap from its own pipe into a tmpfs, like the token: no host file ever holds a value,
 * and no step can change one for the steps after it.
 */
function secretMounts(secrets: readonly SecretFile[]): string[] {
  if (secrets.length === 0) return [];
  return [
    "--tmpfs",
    SECRETS_DIRECTORY,
    ...secrets.flatMap((secret, i) => [
      "--perms",
      "0444",
      "--ro-bind-data",
      String(FIRST_SECRET_FD + i),
      `${SECRETS_DIRECTORY}/${secret.name}`,
    ]),
    "--remount-ro",
    SECRETS_DIRECTORY,
  ];
}

/** The command line inside: stderr joins stdout in one pipe, so the log keeps their exact order. */
function stepCommand(command: string): string[] {
  return ["/bin/sh", "-c", 'exec 2>&1; exec /bin/sh -c "$1"', "sh", command];
}

/** bubblewrap's inputs, each a pipe of its own; bwrap closes each once read. */
const ARGS_FD = 3;
const SECCOMP_FD = 4;
const TOKEN_FD = 5;
const HOSTS_FD = 6;
const RESOLV_CONF_FD = 7;
/** Then one pipe per secret, from 8 on. */
const FIRST_SECRET_FD = 8;

/**
 * bwrap is started through bash, which first closes every descriptor above bwrap's own pipes and
 * then becomes bwrap (`exec`) with an empty environment (`-c`). Node (libuv) and bwrap hand a child
 * every descriptor the parent holds without O_CLOEXEC: the ones the worker or `quire ci run --local`
 * inherited from whatever started it (a shell's `5<file`, a supervisor's pipes). A step could read
 * or truncate those host files through /proc/self/fd/N. bwrap closes its own pipes (3 to 7, then the secrets') once read,
 * so a step starts with only 0, 1 and 2. The closing has to happen before any code of the image runs
 * (the image is the repo's choice, its /bin/sh too), hence on the host side; bash is used because a
 * POSIX sh cannot name descriptors above 9, and Node cannot exec in place.
 */
const closeInheritedAndExecBwrap = (lastBwrapFd: number) =>
  `for fd in /proc/self/fd/*; do fd=\${fd##*/}; if ((fd > ${lastBwrapFd})); then eval "exec $fd>&-"; fi; done; exec -c bwrap "$@"`;

/** Writes a whole input to one of bubblewrap's extra pipes and closes it. */
function feed(pipe: unknown, data: string | Buffer): void {
  const stream = pipe as NodeJS.WritableStream;
  stream.on("error", () => {}); // bwrap failed to start; the exit handlers report it
  stream.end(data);
}

export interface StepOutcome {
  /** The step's exit code; null when the worker killed it. */
  exitCode: number | null;
  /** Why the worker killed it, if it did. */
  killed?: "timeout" | "aborted";
  durationMs: number;
}

/**
 * Runs one step and resolves when it and everything it started are gone. bwrap is started as the
 * leader of its own process group; killing that group kills bwrap, whose PID-namespace init then
 * dies with it (`--die-with-parent`), and the kernel kills every process left in the namespace, a
 * step's background children included.
 */
export function runSandboxedStep(
  spec: SandboxSpec,
  command: string,
  options: { timeoutMs: number; signal?: AbortSignal; onOutput: (chunk: Buffer) => void },
): Promise<StepOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let killed: StepOutcome["killed"];
    // The options go through a pipe (`--args 3`), so the sandbox's `ps` shows no host paths;
    // the seccomp program through another.
    const bwrapArgs = ["--args", String(ARGS_FD), "--", ...stepCommand(command)];
    const { secrets } = spec.workspace;
    const lastFd = FIRST_SECRET_FD + secrets.length - 1;
    const child = spawn("bash", ["-c", closeInheritedAndExecBwrap(lastFd), "bwrap", ...bwrapArgs], {
      // Only what bash needs to find bwrap; the step's environment goes in the options.
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
      detached: true,
      stdio: ["ignore", ...Array.from({ length: lastFd }, () => "pipe" as const)],
    });
    // Node types `stdio` as a tuple of five; there are eight or more.
    const inputs: readonly unknown[] = child.stdio;
    feed(
      inputs[ARGS_FD],
      bwrapOptions(spec)
        .map((arg) => `${arg}\0`)
        .join(""),
    );
    feed(inputs[SECCOMP_FD], SECCOMP_SUPPORTED ? seccompProgram() : "");
    feed(inputs[TOKEN_FD], spec.workspace.token);
    feed(inputs[HOSTS_FD], spec.workspace.hosts);
    feed(inputs[RESOLV_CONF_FD], spec.workspace.resolvConf);
    for (const [i, secret] of secrets.entries()) feed(inputs[FIRST_SECRET_FD + i], secret.value);
    const kill = (why: NonNullable<StepOutcome["killed"]>) => {
      killed ??= why;
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    };
    // setTimeout fires at once past 2^31 - 1 ms (24.8 days); no check is given that long anyway.
    const timer = setTimeout(() => kill("timeout"), Math.min(Math.max(0, options.timeoutMs), 2 ** 31 - 1));
    const onAbort = () => kill("aborted");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();

    child.stdout?.on("data", options.onOutput);
    child.stderr?.on("data", options.onOutput);
    const finish = (exitCode: number | null) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      const outcome: StepOutcome = {
        exitCode: killed ? null : exitCode,
        durationMs: performance.now() - started,
      };
      if (killed) outcome.killed = killed;
      resolve(outcome);
    };
    child.on("error", (error) => {
      options.onOutput(Buffer.from(`quire: cannot start the sandbox (bash, then bwrap): ${error.message}\n`));
      finish(127);
    });
    child.on("close", (code, signal) => finish(code ?? (signal ? 128 : 1)));
  });
}
