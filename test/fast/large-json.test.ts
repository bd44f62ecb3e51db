import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../shared/errors.ts";
import { parseDecodingBase64, parseLiftingLongStrings } from "../../shared/http/large-json.ts";
import { bodyText } from "../../shared/http/text.ts";

/** A base64 string long enough to be lifted out of the parsed text. */
const long = (bytes = 200_000) => randomBytes(bytes).toString("base64");

/** What the plain parse gives: the value, or the error's class and message. */
function plain(body: Buffer): unknown {
  try {
    return JSON.parse(bodyText(body));
  } catch (err) {
    return { thrown: (err as Error).constructor.name, message: (err as Error).message };
  }
}

function lifted(body: Buffer): unknown {
  try {
    return parseLiftingLongStrings(body);
  } catch (err) {
    return { thrown: (err as Error).constructor.name, message: (err as Error).message };
  }
}

describe("parsing a large body without its whole text", () => {
  const content = long();
  const cases: Record<string, string> = {
    "a commit with long contents": JSON.stringify({
      branch: "main",
      message: "m",
      files: [
        { path: "a.bin", content },
        { path: "b.bin", content: long(100_000) },
        { path: "c.md", content: "c2hvcnQ=" },
      ],
    }),
    "a long key, which stays in the text": `{"${content}": 1, "files": []}`,
    "a long string with escapes": JSON.stringify({ message: `${"x".repeat(100_000)}"\\\n\u00e9` }),
    "a long string with a character outside ASCII": JSON.stringify({ message: `${content}\u00e9` }),
    "a long string in an array, with whitespace": `[ "${content}" ,\n\t"${content}"\r\n]`,
    "an error after a long string": `{"files": [{"content": "${content}"}], "x": tru}`,
    "an error before a long string": `{"files": [{"content": ,"${content}"}]}`,
    "an unterminated long string": `{"content": "${content}`,
    "a raw control character in a long string": `{"content": "${content}\u0001"}`,
    "a byte-order mark": `\ufeff{"content": "${content}"}`,
  };
  for (const [name, text] of Object.entries(cases))
    it(`gives what JSON.parse gives: ${name}`, () => {
      const body = Buffer.from(text);
      expect(lifted(body)).toEqual(plain(body));
    });

  it("reads the lifted strings from the body's bytes", () => {
    const body = Buffer.from(JSON.stringify({ files: [{ content }] }));
    const parsed = parseLiftingLongStrings(body) as { files: { content: string }[] };
    expect(parsed.files[0]?.content).toBe(content);
  });

  it("refuses bytes that are not UTF-8 outside the long strings as the plain parse does", () => {
    const body = Buffer.concat([
      Buffer.from(`{"content": "${content}", "m": "`),
      Buffer.from([0xff]),
      Buffer.from('"}'),
    ]);
    expect(() => parseLiftingLongStrings(body)).toThrow(DomainError);
    expect(lifted(body)).toEqual(plain(body));
  });
});

describe("decoding a large body's base64 contents in its own bytes", () => {
  const sha256 = (data: Buffer) => createHash("sha256").update(data).digest();
  /** Files of 1, 2 and 0 bytes of padding, and one long enough for several decoding steps. */
  const files = [200_000, 200_001, 200_002, 3 * 1024 * 1024 + 1].map((n) => randomBytes(n));
  const commit = (contents: string[], extra: Record<string, unknown> = {}) =>
    Buffer.from(
      JSON.stringify({
        branch: "main",
        message: "m",
        files: contents.map((content, i) => ({ path: `f${i}.bin`, content })),
        ...extra,
      }),
    );

  it("hands over each content's bytes and hash by a placeholder that is standard base64", async () => {
    const { value, decoded } = await parseDecodingBase64(
      commit(files.map((f) => f.toString("base64"))),
      new Set(["content"]),
    );
    const placeholders = (value as { files: { content: string }[] }).files.map((f) => f.content);
    expect(new Set(placeholders).size).toBe(files.length);
    files.forEach((file, i) => {
      const placeholder = placeholders[i] ?? "";
      expect(placeholder).toMatch(/^[A-Za-z0-9+/]{24}$/);
      expect(decoded.get(placeholder)?.data.equals(file)).toBe(true);
      expect(decoded.get(placeholder)?.sha256.equals(sha256(file))).toBe(true);
    });
  });

  it("leaves as strings what is not standard base64 or not under a decoded key", async () => {
    const good = files[0]?.toString("base64") ?? "";
    const notBase64 = [
      `${good.slice(0, -4)}AA=A`, // padding before the end
      `${good}A`, // not a multiple of 4
      `${good.slice(0, -4)}A-_A`, // the URL-safe alphabet
      `${good.slice(0, -4)}A===`, // three padding characters
    ];
    const body = commit([...notBase64, good], { message: good });
    const { value, decoded } = await parseDecodingBase64(Buffer.from(body), new Set(["content"]));
    expect(value).toEqual({ ...(JSON.parse(body.toString()) as object), files: expect.any(Array) });
    const contents = (value as { files: { content: string }[] }).files.map((f) => f.content);
    expect(contents.slice(0, notBase64.length)).toEqual(notBase64);
    expect(decoded.size).toBe(1);
    const decodedGood = decoded.get(contents[notBase64.length] ?? "");
    expect(decodedGood?.data.equals(files[0] ?? Buffer.alloc(0))).toBe(true);
  });

  it("decodes base64 contents from 1 KiB up, and leaves shorter ones and other fields strings", async () => {
    const small = Array.from({ length: 400 }, (_, i) => randomBytes(3000 + i));
    const short = randomBytes(700).toString("base64");
    const message = randomBytes(3000).toString("base64");
    const body = commit([...small.map((f) => f.toString("base64")), short], { message });
    const { value, decoded } = await parseDecodingBase64(Buffer.from(body), new Set(["content"]));
    const parsed = value as { message: string; files: { content: string }[] };
    expect(parsed.message).toBe(message);
    expect(parsed.files.at(-1)?.content).toBe(short);
    expect(decoded.size).toBe(small.length);
    small.forEach((file, i) => {
      expect(decoded.get(parsed.files[i]?.content ?? "")?.data.equals(file)).toBe(true);
    });
  });

  it("gives what JSON.parse gives when no key is decoded, and the same errors", async () => {
    const body = commit(files.map((f) => f.toString("base64")));
    expect((await parseDecodingBase64(Buffer.from(body), new Set())).value).toEqual(plain(body));
    const broken = Buffer.from(`{"files": [{"content": "${files[0]?.toString("base64")}"}], "x": tru}`);
    await expect(parseDecodingBase64(broken, new Set(["content"]))).rejects.toThrow(
      (plain(broken) as { message: string }).message,
    );
  });
});
