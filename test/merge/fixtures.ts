import { api, okBody } from "../support/api.ts";
import { policies } from "../support/policies.ts";
import { expectOk, type RepoFixture } from "../support/world.ts";

export { installPolicies } from "../support/world.ts";
export { policies };

export async function merge(fx: RepoFixture, branch: string, dryRun?: boolean) {
  return api(fx.client).post("/repos/:repo*/-/merge", {
    params: { repo: fx.repo },
    body: dryRun === undefined ? { branch } : { branch, dry_run: dryRun },
  });
}

export async function rebase(fx: RepoFixture, branch: string) {
  return api(fx.client).post("/repos/:repo*/-/rebase", { params: { repo: fx.repo }, body: { branch } });
}

export async function expectMerged(fx: RepoFixture, branch: string) {
  const res = await merge(fx, branch);
  expectOk(res, 200);
  return res.body;
}

/** The branch record (`GET …/branch/:branch`). */
export async function branchOf(fx: RepoFixture, branch: string) {
  return okBody(
    await api(fx.client).get("/repos/:repo*/-/branch/:branch*", { params: { repo: fx.repo, branch } }),
  );
}

/** The branch's merge status (`GET …/branch/:branch/status`). */
export async function statusOf(fx: RepoFixture, branch: string) {
  return okBody(
    await api(fx.client).get("/repos/:repo*/-/branch/:branch*/status", { params: { repo: fx.repo, branch } }),
  );
}

/** The paths of a branch's tree, optionally at an earlier sequence. */
export async function treeOf(fx: RepoFixture, branch?: string, at?: number) {
  return okBody(
    await api(fx.client).get("/repos/:repo*/-/tree", {
      params: { repo: fx.repo },
      query: { ...(branch === undefined ? {} : { branch }), ...(at === undefined ? {} : { at: String(at) }) },
    }),
  );
}
