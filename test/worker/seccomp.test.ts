import { describe, expect, it } from "vitest";
import { DENIED_SYSCALLS, seccompProgram } from "../../worker/sandbox/seccomp.ts";

/**
 * The hand-written BPF program, run by a small interpreter of the instructions it uses (load word,
 * jump if equal / greater or equal, return), on the `seccomp_data` the kernel would pass.
 */
function verdict(program: Buffer, arch: number, nr: number): number {
  const data = [nr >>> 0, arch >>> 0]; // offsets 0 and 4
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = data[k / 4] ?? 0;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected instruction ${code.toString(16)} at ${pc}`);
  }
  throw new Error("the program fell off its end");
}

const X86_64 = 0xc000003e;
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;

describe("the seccomp filter", () => {
  const program = seccompProgram();

  it("answers EPERM to every listed call and allows the ordinary ones", () => {
    for (const [name, nr] of Object.entries(DENIED_SYSCALLS)) {
      expect([name, verdict(program, X86_64, nr)]).toEqual([name, EPERM]);
    }
    // read, write, openat, clone, execve, wait4, exit_group: what every step does.
    for (const nr of [0, 1, 257, 56, 59, 61, 231]) expect(verdict(program, X86_64, nr)).toBe(ALLOW);
  });

  it("refuses the x32 ABI and other architectures outright", () => {
    expect(verdict(program, X86_64, 0x40000000 + 1)).toBe(EPERM);
    expect(verdict(program, 0x40000003 /* i386 */, 1)).toBe(EPERM);
    expect(verdict(program, 0xc00000b7 /* aarch64 */, 0)).toBe(EPERM);
  });
});
