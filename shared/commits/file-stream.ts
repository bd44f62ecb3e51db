import { Readable } from "node:stream";
import type { Reply } from "../http/route.ts";

/** Bodies larger than this are sent by fileJsonStream rather than one JSON.stringify. */
export const STREAM_FILE_ABOVE_BYTES = 1_048_576;
/**
 * Bytes encoded per step: a multiple of 3, so each step's base64 has no padding inside, and small
 * enough that each step's string lives and dies in V8's young generation: 3 MiB steps made 4 MiB
 * strings in the large-object space, and the read of a 22.5 MiB file raised the peak by up to
 * 74 MiB before a full collection freed them (docs/benchmarks.md, "A commit held once").
 */
const ENCODE_STEP_BYTES = 48 * 1024;

/**
 * The file object `{path, content, content_type, version_id}` of a large body as a stream of the
 * same JSON bytes, content base64-encoded a few MiB at a time as the client takes them. Encoding
 * a 24 MiB body, stringifying the 32 MiB result and encoding that as UTF-8 in one go held the
 * event loop for all of it, and kept three copies of the body in memory. The length is known in
 * advance (base64 needs no JSON escaping), so the reply still has a Content-Length.
 */
export function fileJsonStream(
  path: string,
  data: Buffer,
  meta: { content_type: string; version_id: string },
): Reply {
  // The same key order as the JSON of a small file: path, content, content_type, version_id.
  const head = Buffer.from(`{"path":${JSON.stringify(path)},"content":"`);
  const tail = Buffer.from(
    `","content_type":${JSON.stringify(meta.content_type)},"version_id":${JSON.stringify(meta.version_id)}}`,
  );
  const contentLength = head.length + Math.ceil(data.length / 3) * 4 + tail.length;
  return {
    status: 200,
    headers: { "content-type": "application/json; charset=utf-8", "content-length": String(contentLength) },
    stream: Readable.from(chunks(head, data, tail), { objectMode: false }),
  };
}

/** Generated lazily: a step is encoded only when the response has room for it. */
function* chunks(head: Buffer, data: Buffer, tail: Buffer): Generator<Buffer> {
  yield head;
  for (let at = 0; at < data.length; at += ENCODE_STEP_BYTES)
    yield Buffer.from(data.subarray(at, at + ENCODE_STEP_BYTES).toString("base64"), "latin1");
  yield tail;
}
