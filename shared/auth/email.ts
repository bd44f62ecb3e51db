/** Longest address SMTP can carry (RFC 5321: a 256-octet path less its angle brackets). */
const MAX_EMAIL = 254;
/** Longest local part (RFC 5321). */
const MAX_LOCAL = 64;

/**
 * One side of an address: no whitespace or separators (`\p{Z}`), no control (`\p{Cc}`) or
 * invisible format characters (`\p{Cf}`), no `@`, and no `/` or `\`, which no identity in a path
 * (`/orgs/{org}/members/{identity}`) may hold.
 */
const PART = /^[^\s\p{Z}\p{Cc}\p{Cf}@/\\]+$/u;

/**
 * Whether `email` is plausible as an identity: `local@domain`, each side non-empty and free of
 * spaces, control and invisible characters, at most 254 characters, well-formed UTF-16 (no lone
 * surrogate). Not a full RFC 5322 parser: the identity provider vouches for the address; this only
 * keeps out what no real address holds and what PostgreSQL or a log line cannot take.
 */
export function isPlausibleEmail(email: string): boolean {
  if (email.length > MAX_EMAIL || !email.isWellFormed()) return false;
  const at = email.indexOf("@");
  if (at < 1 || at > MAX_LOCAL) return false;
  return PART.test(email.slice(0, at)) && PART.test(email.slice(at + 1));
}
