/**
 * A JSON body serialized once and sent as these bytes: a cached answer that never changes (a tree
 * page of a view, shared/commits/reads.ts) is built and stringified on its first read only, so a
 * repeated read costs the bytes' write and nothing else (docs/benchmarks.md, "Reads under
 * concurrency"). `writeReply` sends `bytes` as they are; anything else that serializes the body
 * (the response check, an idempotent replay) sees the JSON value through `toJSON`.
 */
export class JsonBytes {
  readonly bytes: Buffer;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }
  /** The value, for `JSON.stringify`: what a client parses from `bytes`. */
  toJSON(): unknown {
    return JSON.parse(this.bytes.toString("utf8"));
  }
}

/** `value` serialized once, for a reply body sent many times. */
export const jsonBytes = (value: unknown): JsonBytes => new JsonBytes(Buffer.from(JSON.stringify(value)));
