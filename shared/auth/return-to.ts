/**
 * Where sign-in sends the browser back: a path of this service, never another site (an open
 * redirect would lend the service's name to phishing). Anything doubtful falls back to `/`.
 */
const FALLBACK = "/";
const MAX_LENGTH = 2048;

/** True for text a browser might read as leaving the origin: `//host`, `/\host`, a scheme, a control character. */
function looksExternal(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(text)) return true;
  return !text.startsWith("/") || text.startsWith("//");
}

/**
 * `value` when it is a same-origin path (with any query), else `/`. Each percent-decoding of the
 * value is checked too, so `/%2F%2Fevil.example` or `%2F%5Cevil` cannot become `//evil.example`
 * for a later decoder; `/auth/...` is refused so sign-in never returns to itself.
 */
export function safeReturnTo(value: string | undefined): string {
  if (value === undefined || value === "" || value.length > MAX_LENGTH) return FALLBACK;
  let text = value;
  for (let i = 0; i < 4; i++) {
    if (looksExternal(text)) return FALLBACK;
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      return FALLBACK;
    }
    if (decoded === text) break;
    text = decoded;
  }
  if (looksExternal(text)) return FALLBACK;
  const base = "http://return-to.invalid";
  const url = new URL(value, base);
  if (url.origin !== base || url.pathname.startsWith("/auth/")) return FALLBACK;
  return `${url.pathname}${url.search}`;
}
