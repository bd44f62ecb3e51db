import { describe, expect, it } from "vitest";
import { matchPath, segmentsOf } from "../../shared/http/match.ts";

describe("segmentsOf", () => {
  it("drops the leading and trailing slash but keeps empty inner segments", () => {
    expect(segmentsOf("/repos/a/-/tree/")).toEqual(["repos", "a", "-", "tree"]);
    expect(segmentsOf("/")).toEqual([]);
    expect(segmentsOf("/a//b")).toEqual(["a", "", "b"]);
  });
});

describe("matchPath", () => {
  it("takes one segment for :name and decodes it", () => {
    expect(matchPath("/orgs/:org", "/orgs/acme%20inc")).toEqual({ org: "acme inc" });
    expect(matchPath("/orgs/:org", "/orgs/acme/members")).toBeNull();
    expect(matchPath("/orgs/:org", "/orgs")).toBeNull();
  });

  it("splits a repo name from the rest on the first /-/", () => {
    expect(matchPath("/repos/:repo*/-/tree", "/repos/acme/docs/-/tree")).toEqual({ repo: "acme/docs" });
    expect(matchPath("/repos/:repo*/-/file/:path*", "/repos/acme/docs/-/file/a/b.md")).toEqual({
      repo: "acme/docs",
      path: "a/b.md",
    });
  });

  it("never lets a greedy parameter take the - segment", () => {
    expect(matchPath("/repos/:repo*", "/repos/acme/-/tree")).toBeNull();
  });

  it("backtracks a greedy parameter so a literal after it can match", () => {
    expect(matchPath("/repos/:repo*/-/file/:path*/history", "/repos/r/-/file/a/b/history")).toEqual({
      repo: "r",
      path: "a/b",
    });
  });

  it("keeps an encoded slash inside one value", () => {
    expect(matchPath("/repos/:repo*/-/branch/:branch*", "/repos/r/-/branch/x%2Fstatus")).toEqual({
      repo: "r",
      branch: "x/status",
    });
  });

  it("refuses malformed percent-encoding and empty values instead of throwing", () => {
    expect(matchPath("/orgs/:org", "/orgs/%E0%A4%A")).toBeNull();
    expect(matchPath("/repos/:repo*/-/tree", "/repos/a//-/tree")).toBeNull();
  });

  it("matches literals exactly, case and all", () => {
    expect(matchPath("/healthz", "/healthz")).toEqual({});
    expect(matchPath("/healthz", "/Healthz")).toBeNull();
    expect(matchPath("/healthz", "/healthz/")).toEqual({});
  });
});
