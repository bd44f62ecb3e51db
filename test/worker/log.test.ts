import { describe, expect, it } from "vitest";
import { CheckLog, SecretScrubber } from "../../worker/check/log.ts";

describe("secret scrubbing", () => {
  const secret = "eyJhbGciOi.payload.signature";
  const stream = Buffer.from(`before ${secret} middle ${secret}${secret} after`);
  const expected = "before *** middle ****** after";

  it("masks a secret wherever the stream is cut, in two or in single bytes", () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const scrubber = new SecretScrubber([secret, "other-secret"]);
      const out = [
        scrubber.push(stream.subarray(0, cut)),
        scrubber.push(stream.subarray(cut)),
        scrubber.flush(),
      ];
      expect(Buffer.concat(out).toString()).toBe(expected);
    }
    const scrubber = new SecretScrubber([secret]);
    const bytes = [...stream].map((b) => scrubber.push(Buffer.from([b])));
    expect(Buffer.concat([...bytes, scrubber.flush()]).toString()).toBe(expected);
  });

  it("holds back only what may start a secret, so streamed output does not lag a token's length", () => {
    const token = `eyJ${"x".repeat(800)}`;
    const scrubber = new SecretScrubber([token]);
    expect(scrubber.push(Buffer.from("line 1\n")).toString()).toBe("line 1\n");
    expect(scrubber.push(Buffer.from("token: eyJxx")).toString()).toBe("token: ");
    expect(scrubber.push(Buffer.from(`${"x".repeat(798)} done\n`)).toString()).toBe("*** done\n");
    expect(scrubber.push(Buffer.from("e")).toString()).toBe("");
    expect(scrubber.push(Buffer.from("nd\n")).toString()).toBe("end\n");
  });

  it("masks a secret that contains another one whole, and ignores empty secrets", () => {
    const scrubber = new SecretScrubber(["abc", "xxabcxx", ""]);
    const out = Buffer.concat([scrubber.push(Buffer.from("1 xxabcxx 2 abc 3")), scrubber.flush()]);
    expect(out.toString()).toBe("1 *** 2 *** 3");
  });
});

describe("the check log", () => {
  it("never lets a secret through the cap, and writes one truncation line", () => {
    const log = new CheckLog(20, ["0123456789"]);
    log.line("==> step 1/1: x");
    log.output(Buffer.from("01234"));
    log.output(Buffer.from("56789 and a long tail"));
    log.endOutput();
    log.line("<== step 1 exited 0 in 1ms");
    const text = log.toBuffer().toString();
    expect(text).toBe(
      "==> step 1/1: x\n*** \n[log truncated: it reached its cap of 20 bytes; later output was dropped]\n",
    );
    expect(log.truncated).toBe(true);
  });
});
