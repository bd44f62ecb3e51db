/**
 * Hostile `return_to` values (docs/sessions.md): each must bring the browser back to a path of
 * this service, never to another site. Shared by the unit test of `safeReturnTo`
 * (test/fast/return-to.test.ts) and the browser round trip (test/auth/return-to.test.ts).
 */
export const HOSTILE_RETURN_TO: readonly string[] = [
  // Scheme-relative, backslashes, schemes, bare hosts.
  "//evil.example",
  "///evil.example",
  "/\\evil.example",
  "\\\\evil.example",
  "/\\/evil.example",
  "https://evil.example/",
  "http:evil.example",
  "javascript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "evil.example",
  // Dot segments the URL parser removes, leaving `//evil.example`.
  "/.//evil.example",
  "/..//evil.example",
  "/./..//evil.example",
  "/a/..//evil.example",
  "/a/b/../..//evil.example",
  "/.//evil.example?x=1",
  "/.//evil.example#top",
  `/${"./".repeat(500)}/evil.example`,
  `/${"%2e/".repeat(300)}/evil.example`,
  // Encoded dots and slashes, once and twice.
  "/%2e//evil.example",
  "/%2E%2E//evil.example",
  "/.%2e//evil.example",
  "/%252e//evil.example",
  "/.%2F/evil.example",
  "/./%2Fevil.example",
  "/%2F%2Fevil.example",
  "/%2f%5cevil.example",
  "/%5Cevil.example",
  "/.%5C/evil.example",
  "%2F%2Fevil.example",
  "/%252F%252Fevil.example",
  "/%25252F%25252Fevil.example",
  "/%2e%2e/%2e%2e//evil.example",
  // Tabs, newlines, NUL and other controls, raw and encoded.
  "/\t/evil.example",
  "\t//evil.example",
  "//\tevil.example",
  "/.\n//evil.example",
  "/x\r\nSet-Cookie: a=b",
  "/%09/evil.example",
  "/%0d%0aSet-Cookie:x=y",
  "/%00//evil.example",
  // Unicode look-alikes of slashes, and invisible prefixes.
  "/\uff0fevil.example",
  "/\u2215evil.example",
  "/\u29f8evil.example",
  "/\uff3cevil.example",
  "\uff0f\uff0fevil.example",
  "\u200b//evil.example",
  " //evil.example",
  // Userinfo.
  "//user:pass@evil.example/",
  "https://127.0.0.1@evil.example/",
  "//evil.example%2F@127.0.0.1",
  "/.//user@evil.example",
  // Sign-in itself.
  "/auth/logout",
  "/./auth/logout",
  "/x/../auth/login",
  "/%61uth/logout",
  "/auth?x=1",
  "/AUTH/logout",
  // Undecodable, and too long.
  "/%zz",
  `/${"a".repeat(3000)}`,
  `/.//evil.example/${"a".repeat(3000)}`,
];
