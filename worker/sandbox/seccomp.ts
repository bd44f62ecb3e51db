/**
 * A seccomp filter for the steps (x86-64 only), handed to bubblewrap with `--seccomp`: the system
 * calls no build or test needs and that have carried container escapes or kernel exploits answer
 * EPERM, as under Docker's default profile. Namespaces, capabilities and the read-only root are
 * the walls; this trims the kernel surface behind them (io_uring, eBPF, userfaultfd, keyrings,
 * `open_by_handle_at`). Written as classic BPF by hand, since libseccomp is not available to Node.
 */

/** x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
export const DENIED_SYSCALLS: Record<string, number> = {
  syslog: 103,
  vhangup: 153,
  pivot_root: 155,
  adjtimex: 159,
  acct: 163,
  settimeofday: 164,
  mount: 165,
  umount2: 166,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  iopl: 172,
  ioperm: 173,
  init_module: 175,
  delete_module: 176,
  quotactl: 179,
  lookup_dcookie: 212,
  clock_settime: 227,
  kexec_load: 246,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  unshare: 272,
  perf_event_open: 298,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  setns: 308,
  finit_module: 313,
  kexec_file_load: 320,
  bpf: 321,
  userfaultfd: 323,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
};

const AUDIT_ARCH_X86_64 = 0xc000003e;
/** Set on x32 ABI system call numbers: a second syscall table the filter would otherwise miss. */
const X32_SYSCALL_BIT = 0x40000000;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | 1;

// struct seccomp_data: nr at offset 0, arch at offset 4.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;

/** One `struct sock_filter` (code, jt, jf, k), little-endian as the kernel reads it. */
function instruction(code: number, jt: number, jf: number, k: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeUInt16LE(code, 0);
  buffer.writeUInt8(jt, 2);
  buffer.writeUInt8(jf, 3);
  buffer.writeUInt32LE(k >>> 0, 4);
  return buffer;
}

/**
 * The filter program: another architecture or the x32 ABI is refused outright, each listed call
 * answers EPERM, everything else is allowed.
 */
export function seccompProgram(): Buffer {
  const numbers = Object.values(DENIED_SYSCALLS);
  // Layout: 0 load arch, 1 check arch, 2 refuse, 3 load nr, 4 x32 check, then one test per
  // number, then allow, then the refusal they all jump to.
  const deny = 5 + numbers.length + 1;
  const program = [
    instruction(LD_W_ABS, 0, 0, 4),
    instruction(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
    instruction(RET_K, 0, 0, RET_EPERM),
    instruction(LD_W_ABS, 0, 0, 0),
    instruction(JGE_K, deny - 4 - 1, 0, X32_SYSCALL_BIT),
    ...numbers.map((nr, i) => instruction(JEQ_K, deny - (5 + i) - 1, 0, nr)),
    instruction(RET_K, 0, 0, RET_ALLOW),
    instruction(RET_K, 0, 0, RET_EPERM),
  ];
  return Buffer.concat(program);
}

/** The filter is written for x86-64 system call numbers; elsewhere the steps run without it. */
export const SECCOMP_SUPPORTED = process.arch === "x64";
