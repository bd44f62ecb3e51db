const MASK = Buffer.from("***");

/**
 * Replaces every secret with `***` in a byte stream that arrives in arbitrary chunks. A secret can
 * straddle two chunks (a step printing it in two writes), so bytes that may be the start of one
 * stay held back until the next chunk or `flush()`: any occurrence not yet complete starts there.
 */
export class SecretScrubber {
  readonly #secrets: Buffer[];
  readonly #holdBack: number;
  #carry: Buffer = Buffer.alloc(0);

  constructor(secrets: string[]) {
    // Longest first, so a secret that contains another is masked whole.
    this.#secrets = [...new Set(secrets.filter((s) => s.length > 0))]
      .map((s) => Buffer.from(s))
      .sort((a, b) => b.length - a.length);
    this.#holdBack = Math.max(0, ...this.#secrets.map((s) => s.length - 1));
  }

  /** The scrubbed bytes that are safe to emit now. */
  push(chunk: Buffer): Buffer {
    const scrubbed = this.#scrub(Buffer.concat([this.#carry, chunk]));
    const cut = this.#incompleteFrom(scrubbed);
    this.#carry = scrubbed.subarray(cut);
    return scrubbed.subarray(0, cut);
  }

  /**
   * Where a secret may have begun without ending yet: the first of the last `longest - 1` bytes
   * whose rest is the start of a secret. Only those are held back, so a streamed log shows output
   * as it comes instead of lagging a token's length behind it.
   */
  #incompleteFrom(bytes: Buffer): number {
    for (let at = Math.max(0, bytes.length - this.#holdBack); at < bytes.length; at++) {
      const rest = bytes.subarray(at);
      if (this.#secrets.some((s) => s.length > rest.length && s.subarray(0, rest.length).equals(rest)))
        return at;
    }
    return bytes.length;
  }

  /** Everything held back (the stream ended). */
  flush(): Buffer {
    const rest = this.#carry;
    this.#carry = Buffer.alloc(0);
    return rest;
  }

  #scrub(bytes: Buffer): Buffer {
    let out = bytes;
    for (const secret of this.#secrets) {
      let at = out.indexOf(secret);
      if (at === -1) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at !== -1) {
        parts.push(out.subarray(from, at), MASK);
        from = at + secret.length;
        at = out.indexOf(secret, from);
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  }
}

/**
 * A check's log: scrubbed of secrets, then capped. Past the cap one truncation line is written
 * and everything later is dropped (the steps keep running; their output is drained, not kept).
 */
export class CheckLog {
  readonly #cap: number;
  readonly #chunks: Buffer[] = [];
  readonly #scrubber: SecretScrubber;
  #size = 0;
  #kept = 0;
  #truncated = false;

  constructor(capBytes: number, secrets: string[]) {
    this.#cap = capBytes;
    this.#scrubber = new SecretScrubber(secrets);
  }

  /** Output of a step, in arrival order. */
  output(chunk: Buffer): void {
    this.#keep(this.#scrubber.push(chunk));
  }

  /** A line of the worker's own (headers, exit codes), after any held-back step output. */
  line(text: string): void {
    this.#keep(this.#scrubber.flush());
    this.#keep(this.#scrubber.push(Buffer.from(`${text}\n`)));
    this.#keep(this.#scrubber.flush());
  }

  /** Ends a step's output with a newline if it did not, so the next header starts a line. */
  endOutput(): void {
    const rest = this.#scrubber.flush();
    this.#keep(rest);
    const last = rest.length > 0 ? rest : this.#chunks.at(-1);
    if (last && last.length > 0 && last[last.length - 1] !== 0x0a && !this.#truncated)
      this.#keep(Buffer.from("\n"));
  }

  /** Bytes kept so far (the truncation line included): grows whenever the log does. */
  get size(): number {
    return this.#kept;
  }

  get truncated(): boolean {
    return this.#truncated;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.#chunks);
  }

  #push(bytes: Buffer): void {
    this.#chunks.push(bytes);
    this.#kept += bytes.length;
  }

  #keep(bytes: Buffer): void {
    if (bytes.length === 0 || this.#truncated) return;
    const room = this.#cap - this.#size;
    if (bytes.length <= room) {
      this.#push(Buffer.from(bytes));
      this.#size += bytes.length;
      return;
    }
    if (room > 0) this.#push(Buffer.from(bytes.subarray(0, room)));
    this.#size = this.#cap;
    this.#truncated = true;
    this.#push(
      Buffer.from(`\n[log truncated: it reached its cap of ${this.#cap} bytes; later output was dropped]\n`),
    );
  }
}
