import { expect } from "vitest";
import { policies } from "../support/policies.ts";
import type { RepoFixture } from "../support/world.ts";

export { installPolicies } from "../support/world.ts";
export { policies };

export async function merge(fx: RepoFixture, branch: string) {
  return fx.client.post(`${fx.base}/merge`, { branch });
}

export async function rebase(fx: RepoFixture, branch: string) {
  return fx.client.post(`${fx.base}/rebase`, { branch });
}

export async function expectMerged(fx: RepoFixture, branch: string) {
  const res = await merge(fx, branch);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as {
    sequence: number;
    branch: string;
    merged_by: string;
    proposal_id: string | null;
    dry_run: boolean;
  };
}
