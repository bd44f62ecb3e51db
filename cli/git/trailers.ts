/*
 * Trailers (`Key: value` lines in a message's last paragraph, as `git interpret-trailers` reads
 * them): how an import records the git commit a Quire commit came from, and an export the Quire
 * sequence and hash a git commit came from (docs/git.md).
 */

const TRAILER_LINE = /^[A-Za-z0-9][A-Za-z0-9-]*: /;

const isTrailerBlock = (paragraph: string) =>
  paragraph !== "" && paragraph.split("\n").every((l) => TRAILER_LINE.test(l));

/** The text after the last blank line (the whole text when it has none). */
const lastParagraph = (body: string) => body.slice(body.lastIndexOf("\n\n") + 1).replace(/^\n/, "");

/**
 * `message` with `trailers` added: to its last paragraph when that already is a block of
 * trailers (so a message imported, exported and imported again keeps one block), else as a new
 * paragraph. Trailing blank lines of the message are dropped.
 */
export function withTrailers(message: string, trailers: [string, string][]): string {
  const body = message.replace(/\s+$/, "");
  const lines = trailers.map(([k, v]) => `${k}: ${v}`).join("\n");
  if (body === "") return lines;
  return isTrailerBlock(lastParagraph(body)) && body.includes("\n\n")
    ? `${body}\n${lines}`
    : `${body}\n\n${lines}`;
}

/** The value of the last `key` trailer in the message's last paragraph, if any. */
export function trailer(message: string, key: string): string | undefined {
  const body = message.replace(/\s+$/, "");
  const last = lastParagraph(body);
  if (!isTrailerBlock(last)) return undefined;
  const prefix = `${key}: `;
  return last
    .split("\n")
    .filter((l) => l.startsWith(prefix))
    .at(-1)
    ?.slice(prefix.length);
}
