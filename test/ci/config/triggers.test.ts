import { describe, expect, it } from "vitest";
import type { IfEvent } from "../../../shared/ci/config/expression.ts";
import { describeConfigErrors } from "../../../shared/ci/config/file.ts";
import { parseCiConfig } from "../../../shared/ci/config/parse.ts";
import type { CiConfig } from "../../../shared/ci/config/schema.ts";
import { type CiDelivery, checksToRun, triggersFor } from "../../../shared/ci/config/triggers.ts";

const CHECKS = ["checks:", "  - {name: lint, image: node:24, steps: [npm run lint]}"];

/** A configuration from its `on` lines (none: no `on` block) and the one check above. */
function withOn(...on: string[]): CiConfig {
  const result = parseCiConfig(`${[...on, ...CHECKS].join("\n")}\n`);
  if (!result.ok) throw new Error(describeConfigErrors(result.errors));
  return result.config;
}

const commit = (branch: string, openProposalBase?: string): CiDelivery => ({
  kind: "commit.created",
  branch,
  openProposal: openProposalBase === undefined ? null : { base_branch: openProposalBase },
});
const opened = (branch: string, base_branch: string): CiDelivery => ({
  kind: "proposal.opened",
  branch,
  base_branch,
});
const minute = (iso: string): CiDelivery => ({ kind: "schedule", minute: new Date(iso) });
const manual: CiDelivery = { kind: "manual" };

const noOnBlock = withOn();
const pushMainOnly = withOn("on:", "  push:", "    branches: [main, 'release/**']");
const pushAll = withOn("on:", "  push:");
const proposalsToMain = withOn("on:", "  proposal:", "    base_branches: [main]");
const proposalsAll = withOn("on:", "  proposal:");
const pushAndProposals = withOn("on:", "  push:", "    branches: [main]", "  proposal:");
const nightly = withOn("on:", "  schedule:", "    - cron: '0 3 * * *'", "    - cron: '0 3 * * 1'");
const manualOnly = withOn("on:", "  manual:");

describe("triggersFor follows the CI trigger mapping", () => {
  it.each([
    // [configuration, delivery, trigger types]
    // commit.created -> push, unless on.push.branches excludes the branch
    ["no on block", noOnBlock, commit("feature/x"), ["push"]],
    ["no on block", noOnBlock, commit("main"), ["push"]],
    ["push: (all branches)", pushAll, commit("a/b/c"), ["push"]],
    ["push: [main, release/**]", pushMainOnly, commit("main"), ["push"]],
    ["push: [main, release/**]", pushMainOnly, commit("release/1.0/fix"), ["push"]],
    ["push: [main, release/**]", pushMainOnly, commit("feature/x"), []],
    // an on block without push: commits enqueue no push job
    ["proposal only", proposalsAll, commit("feature/x"), []],
    ["schedule only", nightly, commit("main"), []],
    ["manual only", manualOnly, commit("main"), []],
    // proposal_synchronized: additionally, when the branch has an open proposal and on.proposal is configured
    ["no on block, open proposal", noOnBlock, commit("feature/x", "main"), ["push"]],
    [
      "proposal: (all bases), open proposal",
      proposalsAll,
      commit("feature/x", "main"),
      ["proposal_synchronized"],
    ],
    [
      "proposal: [main], open proposal to main",
      proposalsToMain,
      commit("feature/x", "main"),
      ["proposal_synchronized"],
    ],
    ["proposal: [main], open proposal to dev", proposalsToMain, commit("feature/x", "dev"), []],
    [
      "push + proposal, open proposal",
      pushAndProposals,
      commit("main", "release"),
      ["push", "proposal_synchronized"],
    ],
    [
      "push excludes, proposal matches",
      pushAndProposals,
      commit("feature/x", "main"),
      ["proposal_synchronized"],
    ],
    ["push + proposal, no open proposal", pushAndProposals, commit("feature/x"), []],
    // proposal.opened -> proposal when on.proposal.base_branches matches the base branch
    ["proposal: (all bases)", proposalsAll, opened("feature/x", "anything"), ["proposal"]],
    ["proposal: [main]", proposalsToMain, opened("feature/x", "main"), ["proposal"]],
    ["proposal: [main]", proposalsToMain, opened("feature/x", "dev"), []],
    ["no on block", noOnBlock, opened("feature/x", "main"), []],
    ["push only", pushAll, opened("feature/x", "main"), []],
    // schedule -> schedule when the minute matches; one job however many entries fire
    ["nightly", nightly, minute("2024-05-07T03:00:00Z"), ["schedule"]],
    ["nightly, Monday (both fire)", nightly, minute("2024-05-06T03:00:00Z"), ["schedule"]],
    ["nightly, seconds ignored", nightly, minute("2024-05-07T03:00:42Z"), ["schedule"]],
    ["nightly, wrong minute", nightly, minute("2024-05-07T03:01:00Z"), []],
    ["no on block", noOnBlock, minute("2024-05-07T03:00:00Z"), []],
    // manual -> always, whatever the on block says
    ["no on block", noOnBlock, manual, ["manual"]],
    ["push: [main, release/**]", pushMainOnly, manual, ["manual"]],
    ["manual only", manualOnly, manual, ["manual"]],
    ["schedule only", nightly, manual, ["manual"]],
  ] as const)("%s: %o -> %o", (_, config, delivery, expected) => {
    expect(triggersFor(config, delivery)).toEqual(expected);
  });
});

describe("checksToRun applies `if:`", () => {
  const config = (() => {
    const result = parseCiConfig(
      [
        "checks:",
        "  - {name: always, image: x, steps: [s]}",
        "  - {name: on-push, image: x, steps: [s], if: \"event.type == 'push'\"}",
        "  - name: proposals-to-main",
        "    image: x",
        "    steps: [s]",
        "    if: (event.type == 'proposal' || event.type == 'proposal_synchronized') && event.base_branch == 'main'",
        "  - {name: not-main, image: x, steps: [s], if: \"event.branch != 'main'\"}",
        "  - {name: nightly, image: x, steps: [s], if: \"event.type == 'schedule'\"}",
        "",
      ].join("\n"),
    );
    if (!result.ok) throw new Error(describeConfigErrors(result.errors));
    return result.config;
  })();
  const event = (type: string, branch: string, base_branch = "", proposal_id = ""): IfEvent => ({
    type,
    branch,
    base_branch,
    proposal_id,
  });

  it.each([
    [event("push", "main"), ["always", "on-push"]],
    [event("push", "feature/x"), ["always", "on-push", "not-main"]],
    [event("proposal", "feature/x", "main", "p1"), ["always", "proposals-to-main", "not-main"]],
    [event("proposal_synchronized", "feature/x", "main", "p1"), ["always", "proposals-to-main", "not-main"]],
    [event("proposal", "feature/x", "dev", "p1"), ["always", "not-main"]],
    [event("schedule", "main"), ["always", "nightly"]],
    [event("manual", "feature/x"), ["always", "not-main"]],
  ])("%o runs %o, in file order", (e, expected) => {
    expect(checksToRun(config, e).map((c) => c.name)).toEqual(expected);
  });

  it("returns every check when none has an `if`", () => {
    expect(checksToRun(noOnBlock, event("push", "main")).map((c) => c.name)).toEqual(["lint"]);
  });
});
