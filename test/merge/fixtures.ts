import { expect } from "vitest";
import { commit, type RepoFixture } from "../commits/fixtures.ts";
import { b64 } from "../support/client.ts";
import { policies } from "../support/policies.ts";

export { policies };

/** Commits policy files to main (the fixture's client is the org owner, so it may). */
export async function installPolicies(fx: RepoFixture, sources: Record<string, string>): Promise<number> {
  const files = Object.entries(sources).map(([name, text]) => ({
    path: `.svc/policy/${name}.rego`,
    content: b64(text),
  }));
  return commit(fx, "main", files, "install policies");
}

export async function merge(fx: RepoFixture, branch: string) {
  return fx.client.post(`${fx.base}/merge`, { branch });
}

export async function rebase(fx: RepoFixture, branch: string) {
  return fx.client.post(`${fx.base}/rebase`, { branch });
}

export async function expectMerged(fx: RepoFixture, branch: string) {
  const res = await merge(fx, branch);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { sequence: number; branch: string; merged_by: string; proposal_id: string | null };
}
