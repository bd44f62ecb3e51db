/**
 * The matching semantics of a Google Cloud URL map (compute `urlMaps`), as terraform writes it
 * (snake_case), for the routing test: host rules pick a path matcher; a path matcher has either
 * path rules (longest path wins; `/x/*` is a prefix, any other path is exact) or route rules
 * (tried in `priority` order, lowest first; a rule matches when any of its match rules does, and a
 * match rule matches when its one path condition and every header match hold). Nothing matching
 * falls to the matcher's, then the map's, default service. The path is matched without the query.
 *
 * Anything this model does not implement (regex path matches, query parameter matches, range
 * header matches) throws, so the test cannot silently read a URL map it does not understand.
 */

import { referenceParts } from "./terraform.ts";

export interface HeaderMatch {
  header_name: string;
  exact_match?: string;
  prefix_match?: string;
  suffix_match?: string;
  present_match?: boolean;
  invert_match?: boolean;
}

export interface MatchRule {
  prefix_match?: string;
  full_path_match?: string;
  path_template_match?: string;
  ignore_case?: boolean;
  header_matches?: HeaderMatch[];
  regex_match?: string;
  query_parameter_matches?: unknown[];
}

export interface RouteRule {
  priority: number;
  service?: string;
  match_rules?: MatchRule[];
}

export interface PathRule {
  paths: string[];
  service?: string;
}

export interface PathMatcher {
  name: string;
  default_service?: string;
  path_rule?: PathRule[];
  route_rules?: RouteRule[];
}

export interface UrlMap {
  default_service?: string;
  host_rule?: { hosts: string[]; path_matcher: string }[];
  path_matcher?: PathMatcher[];
}

export interface Request {
  host: string;
  /** Path and optional query string. */
  url: string;
  /** Header names in any case. */
  headers?: Record<string, string>;
}

/** The service (as written in the URL map) a request is sent to. */
export function routeRequest(map: UrlMap, req: Request): string {
  const path = req.url.split(/[?#]/)[0] ?? "";
  const headers = Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const matcher = pathMatcherFor(map, req.host);
  const service = matcher ? serviceIn(matcher, path, headers) : undefined;
  const chosen = service ?? matcher?.default_service ?? map.default_service;
  if (chosen === undefined) throw new Error(`no service for ${req.url}: the URL map has no default`);
  return chosen;
}

function pathMatcherFor(map: UrlMap, host: string): PathMatcher | undefined {
  const rule = (map.host_rule ?? []).find((r) => r.hosts.some((h) => hostMatches(h, host)));
  if (!rule) return undefined;
  const matcher = (map.path_matcher ?? []).find((m) => m.name === rule.path_matcher);
  if (!matcher) throw new Error(`host rule names a missing path matcher ${rule.path_matcher}`);
  return matcher;
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1));
  return pattern.toLowerCase() === host.toLowerCase();
}

function serviceIn(matcher: PathMatcher, path: string, headers: Record<string, string>): string | undefined {
  if (matcher.path_rule?.length && matcher.route_rules?.length)
    throw new Error(`path matcher ${matcher.name} sets both path rules and route rules`);
  if (matcher.route_rules?.length) return routeRuleService(matcher.route_rules, path, headers);
  return pathRuleService(matcher.path_rule ?? [], path);
}

/** Route rules: the first by priority (which must be unique) whose any match rule matches. */
function routeRuleService(rules: RouteRule[], path: string, headers: Record<string, string>) {
  const priorities = rules.map((r) => r.priority);
  if (new Set(priorities).size !== priorities.length) throw new Error("route rule priorities must be unique");
  const ordered = [...rules].sort((a, b) => a.priority - b.priority);
  return ordered.find((r) => (r.match_rules ?? []).some((m) => matchRuleMatches(m, path, headers)))?.service;
}

/** Path rules: the longest matching path wins, whatever the order. */
function pathRuleService(rules: PathRule[], path: string): string | undefined {
  let best: { length: number; service: string | undefined } | undefined;
  for (const rule of rules)
    for (const p of rule.paths) {
      const star = p.endsWith("/*");
      if (p.includes("*") && !star) throw new Error(`path rule ${p}: a * may only end the path, after a /`);
      const hit = star ? path.startsWith(p.slice(0, -1)) : path === p;
      if (hit && (!best || p.length > best.length)) best = { length: p.length, service: rule.service };
    }
  return best?.service;
}

function matchRuleMatches(rule: MatchRule, path: string, headers: Record<string, string>): boolean {
  if (rule.regex_match !== undefined || rule.query_parameter_matches?.length)
    throw new Error("regex and query parameter matches are not modelled");
  const conditions = [rule.prefix_match, rule.full_path_match, rule.path_template_match].filter(
    (c) => c !== undefined,
  );
  if (conditions.length !== 1) throw new Error("a match rule needs exactly one path condition");
  const fold = (s: string) => (rule.ignore_case ? s.toLowerCase() : s);
  const p = fold(path);
  let pathOk: boolean;
  if (rule.prefix_match !== undefined) pathOk = p.startsWith(fold(rule.prefix_match));
  else if (rule.full_path_match !== undefined) pathOk = p === fold(rule.full_path_match);
  else pathOk = templateMatches(fold(rule.path_template_match as string), p);
  return pathOk && (rule.header_matches ?? []).every((h) => headerMatches(h, headers));
}

function headerMatches(match: HeaderMatch, headers: Record<string, string>): boolean {
  const value = headers[match.header_name.toLowerCase()];
  let hit: boolean;
  if (match.present_match !== undefined) hit = (value !== undefined) === match.present_match;
  else if (value === undefined) hit = false;
  else if (match.exact_match !== undefined) hit = value === match.exact_match;
  else if (match.prefix_match !== undefined) hit = value.startsWith(match.prefix_match);
  else if (match.suffix_match !== undefined) hit = value.endsWith(match.suffix_match);
  else
    throw new Error(
      `header match on ${match.header_name}: only exact, prefix, suffix and present are modelled`,
    );
  return match.invert_match ? !hit : hit;
}

/**
 * A path template: literal segments, `*` or `{name}` / `{name=*}` for one segment, and `**` or
 * `{name=**}` for any number of segments, which may only come last. At most 5 operators.
 */
export function templateMatches(template: string, path: string): boolean {
  if (!template.startsWith("/")) throw new Error(`path template ${template} must start with /`);
  const parts = template.slice(1).split("/");
  const kinds = parts.map(operatorOf);
  const operators = kinds.filter((k) => k !== "literal").length;
  if (operators > 5) throw new Error(`path template ${template} has more than 5 operators`);
  const many = kinds.indexOf("many");
  if (many !== -1 && many !== parts.length - 1)
    throw new Error(`path template ${template}: ** must come last`);
  const segments = path.slice(1).split("/");
  for (const [i, kind] of kinds.entries()) {
    if (kind === "many") return segments.slice(i).every((s) => s !== "") || segments.length === i;
    const seg = segments[i];
    if (seg === undefined || seg === "") return false;
    if (kind === "literal" && seg !== parts[i]) return false;
  }
  return segments.length === parts.length;
}

function operatorOf(part: string): "literal" | "one" | "many" {
  if (part === "**" || /^\{\w+=\*\*\}$/.test(part)) return "many";
  if (part === "*" || /^\{\w+(=\*)?\}$/.test(part)) return "one";
  if (/[*{}]/.test(part)) throw new Error(`path template segment ${part} is not modelled`);
  return "literal";
}

/**
 * The group a backend service leads to: `google_compute_backend_service.function["x"]` is the
 * function with entry point `x` (through its serverless NEG), `...events` the SSE service.
 */
export function groupOf(service: string): string {
  const ref = referenceParts(service);
  if (ref?.[0] !== "google_compute_backend_service" || ref.at(-1) !== "id")
    throw new Error(`URL map service ${service} is not a backend service's id`);
  if (ref[1] === "events" && ref.length === 3) return "events";
  if (ref[1] === "function" && ref.length === 4) return ref[2] as string;
  throw new Error(`unknown backend service ${service}`);
}
