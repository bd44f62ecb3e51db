/**
 * Where sign-in sends the browser back: a path of this service, never another site (an open
 * redirect would lend the service's name to phishing). Anything doubtful falls back to `/`.
 */
const FALLBACK = "/";
const MAX_LENGTH = 2048;
/** How many rounds of percent-decoding are looked through (`%25252F` is three). */
const DECODINGS = 4;
const BASE = "http://return-to.invalid";
/** Sign-in's own paths: `/auth`, `/auth/...`, `/auth?...`. */
const SIGN_IN = /^\/auth([/?#]|$)/i;

/** True for text a browser might read as leaving the origin: `//host`, `/\host`, a scheme, a control character. */
function looksExternal(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(text)) return true;
  return !text.startsWith("/") || text.startsWith("//");
}

/** The path and query a URL parser makes of `text` on this origin, or null if it leaves it. */
function normalised(text: string): string | null {
  const url = new URL(text, BASE);
  return url.origin === BASE ? `${url.pathname}${url.search}` : null;
}

/**
 * True when `text`, each of its percent-decodings, and the URL parser's normalisation of each
 * (dot segments removed: `/.//evil` is `//evil`) is a path of this origin outside `/auth/`.
 * Every form is checked because a later decoder or parser may see any of them.
 */
function staysHere(text: string): boolean {
  let current = text;
  for (let i = 0; i <= DECODINGS; i++) {
    const parsed = looksExternal(current) ? null : normalised(current);
    if (parsed === null || looksExternal(parsed)) return false;
    if (SIGN_IN.test(current) || SIGN_IN.test(parsed)) return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return false;
    }
    if (decoded === current) return true;
    current = decoded;
  }
  return false;
}

/**
 * `value` normalised when it is a same-origin path (with any query), else `/`. What is returned
 * is checked as well as what was given: the parser's output is what the browser follows, and
 * dot segments can turn a harmless path (`/.//evil.example`) into a scheme-relative URL.
 * `/auth/...` is refused so sign-in never returns to itself.
 */
export function safeReturnTo(value: string | undefined): string {
  if (value === undefined || value === "" || value.length > MAX_LENGTH) return FALLBACK;
  if (!staysHere(value)) return FALLBACK;
  const result = normalised(value);
  if (result === null || result.length > MAX_LENGTH || !staysHere(result)) return FALLBACK;
  return result;
}
