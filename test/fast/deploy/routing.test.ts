import { beforeAll, describe, expect, it } from "vitest";
import { allRoutes, groups, internalFunctions } from "../../../functions/groups.ts";
import { findRoute } from "../../../shared/http/dispatch.ts";
import type { AnyRoute } from "../../../shared/http/route.ts";
import { type Body, expr, loadTerraform, resource, type Terraform } from "./terraform.ts";
import { groupOf, routeRequest, templateMatches, type UrlMap } from "./urlmap.ts";

/**
 * The load balancer's URL map (terraform/lb.tf) against the route tables (functions/groups.ts):
 * every route of every table, expanded into concrete paths (repo names of 2 to 5 segments, branch
 * names with slashes), reaches the function that serves it, and no other function serves it.
 * docs/routing.md explains the map.
 */

const SSE = { accept: "text/event-stream" };
const JSON_ACCEPT = { accept: "application/json" };

/** Example values per path parameter: names that hold slashes, and names that look like routes. */
const examples: Record<string, string[]> = {
  "repo*": ["acme/app", "acme/events/orgs", "acme/a/b/events", "acme/a/b/c/healthz"],
  // A branch whose last segment is a route word (`x/status`) is written `x%2Fstatus` by design
  // (shared/http/dispatch.ts), so these end in other words.
  "branch*": ["main", "feature/x", "user/fix/deep", "events"],
  "path*": ["README.md", "docs/guide/history.json"],
  "check*": ["lint", "build/unit"],
  org: ["acme", "repos"],
  identity: ["bob@example.com"],
};

function valuesOf(param: string): string[] {
  return examples[param] ?? (param.endsWith("*") ? ["x/y"] : ["7"]);
}

/** Every concrete path of a pattern, one per combination of example values. */
export function examplePaths(pattern: string): string[] {
  let paths = [""];
  for (const segment of pattern.split("/").slice(1)) {
    const values = segment.startsWith(":") ? valuesOf(segment.slice(1)) : [segment];
    paths = paths.flatMap((p) => values.map((v) => `${p}/${v.split("/").map(encodeURIComponent).join("/")}`));
  }
  return paths;
}

/** The route of a table that answers a request locally, or undefined (404 or 405). */
function servedBy(routes: readonly AnyRoute[], method: string, path: string): AnyRoute | undefined {
  try {
    return findRoute(routes, method, path).route;
  } catch {
    return undefined;
  }
}

let tf: Terraform;
let urlMap: UrlMap;

beforeAll(async () => {
  tf = await loadTerraform();
  urlMap = resource(tf, "google_compute_url_map", "api") as UrlMap;
});

const reach = (path: string, headers: Record<string, string> = {}) =>
  groupOf(routeRequest(urlMap, { host: "quire.example.com", url: path, headers }));

const groupNames = Object.keys(groups) as (keyof typeof groups)[];

describe("the URL map routes every route of every table to the function that serves it", () => {
  for (const name of groupNames)
    it(`group ${name}`, () => {
      for (const route of groups[name] as readonly AnyRoute[]) {
        // The streams are asked for as streams (EventSource sends this header); every other route
        // is checked without it and with a JSON Accept header.
        const headerSets = name === "events" ? [SSE] : [{}, JSON_ACCEPT];
        for (const path of examplePaths(route.path))
          for (const headers of headerSets) {
            const where = `${route.method} ${path} ${JSON.stringify(headers)}`;
            const target = reach(`${path}?x=1`, headers);
            expect(target, where).toBe(name);
            expect(servedBy(groups[target as keyof typeof groups], route.method, path), where).toBe(route);
            for (const other of groupNames.filter((g) => g !== target))
              expect(
                servedBy(groups[other], route.method, path),
                `${where} also served by ${other}`,
              ).toBeUndefined();
            expect(servedBy(allRoutes, route.method, path), `${where} locally`).toBe(route);
          }
      }
    });

  it("sends /events to the SSE service whatever the Accept header", () => {
    expect(reach("/events")).toBe("events");
    expect(reach("/events", JSON_ACCEPT)).toBe("events");
  });

  it("sends a repo's stream without `Accept: text/event-stream` to repos, which has no such route (docs/routing.md)", () => {
    expect(reach("/repos/acme/a/b/-/events")).toBe("repos");
    expect(servedBy(groups.repos, "GET", "/repos/acme/a/b/-/events")).toBeUndefined();
  });

  it("routes no path to an internal function, and gives them no backend", () => {
    for (const routes of Object.values(internalFunctions))
      for (const route of routes) {
        expect(reach(route.path), route.path).toBe("meta");
        expect(servedBy(groups.meta, route.method, route.path), route.path).toBeUndefined();
      }
    const backends = tf.resources["google_compute_backend_service"] ?? {};
    expect(backends["function"]?.["for_each"]).toBe(expr("local.public_functions"));
    for (const name of Object.keys(internalFunctions))
      expect(tf.locals["functions"][name].public).toBe(false);
  });

  it("sends unknown paths to meta, which answers Quire's 404", () => {
    for (const path of ["/uix", "/reposx", "/nope/a/b", "/jobs", "/.well-known"])
      expect(reach(path), path).toBe("meta");
  });

  it("reaches each public function through its own NEG and backend service", () => {
    const neg = resource(tf, "google_compute_region_network_endpoint_group", "function");
    expect(neg["cloud_function"][0].function).toBe(expr("google_cloudfunctions2_function.fn[each.key].name"));
    const backend = resource(tf, "google_compute_backend_service", "function");
    expect(backend["backend"][0].group).toBe(
      expr("google_compute_region_network_endpoint_group.function[each.key].id"),
    );
    const eventsNeg = resource(tf, "google_compute_region_network_endpoint_group", "events");
    expect(eventsNeg["cloud_run"][0].service).toBe(expr("google_cloud_run_v2_service.events.name"));
    const fn = resource(tf, "google_cloudfunctions2_function", "fn");
    expect((fn["build_config"] as Body[])[0]?.["entry_point"]).toBe(expr("each.key"));
  });
});

describe("the URL map model", () => {
  it("matches path templates as Google documents them", () => {
    expect(templateMatches("/jobs/{id}/**", "/jobs/7/heartbeat")).toBe(true);
    expect(templateMatches("/jobs/{id}/**", "/jobs/7")).toBe(true);
    expect(templateMatches("/jobs/{id}/**", "/jobs")).toBe(false);
    expect(templateMatches("/run/*", "/run/7/logs")).toBe(false);
    expect(() => templateMatches("/repos/**/-/events", "/repos/a/-/events")).toThrow(/must come last/);
  });

  it("tries route rules by priority, not by order, and needs every header match", () => {
    const map: UrlMap = {
      default_service: "d",
      host_rule: [{ hosts: ["*"], path_matcher: "m" }],
      path_matcher: [
        {
          name: "m",
          route_rules: [
            { priority: 2, service: "wide", match_rules: [{ prefix_match: "/a/" }] },
            {
              priority: 1,
              service: "narrow",
              match_rules: [
                { prefix_match: "/a/", header_matches: [{ header_name: "X", exact_match: "1" }] },
              ],
            },
          ],
        },
      ],
    };
    expect(routeRequest(map, { host: "h", url: "/a/b", headers: { x: "1" } })).toBe("narrow");
    expect(routeRequest(map, { host: "h", url: "/a/b", headers: { x: "2" } })).toBe("wide");
    expect(routeRequest(map, { host: "h", url: "/b" })).toBe("d");
  });

  it("takes the longest path rule", () => {
    const map: UrlMap = {
      host_rule: [{ hosts: ["*"], path_matcher: "m" }],
      path_matcher: [
        {
          name: "m",
          default_service: "d",
          path_rule: [
            { paths: ["/a/*"], service: "short" },
            { paths: ["/a/b/*", "/exact"], service: "long" },
          ],
        },
      ],
    };
    expect(routeRequest(map, { host: "h", url: "/a/b/c" })).toBe("long");
    expect(routeRequest(map, { host: "h", url: "/a/c" })).toBe("short");
    expect(routeRequest(map, { host: "h", url: "/exact/x" })).toBe("d");
  });
});
