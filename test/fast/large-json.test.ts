import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../shared/errors.ts";
import { parseLiftingLongStrings } from "../../shared/http/large-json.ts";
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
