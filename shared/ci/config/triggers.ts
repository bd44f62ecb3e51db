import { cronMatches } from "./cron.ts";
import { evaluateIf, type IfEvent } from "./expression.ts";
import { matchesBranch } from "./glob.ts";
import type { CiCheck, CiConfig } from "./schema.ts";

/** A CI job's trigger type (SPEC "CI job"). */
export const triggerTypes = ["push", "proposal", "proposal_synchronized", "manual", "schedule"] as const;
export type TriggerType = (typeof triggerTypes)[number];

/**
 * What the scheduler saw, read against the configuration of the branch under test.
 * For a commit, `openProposal` is the branch's open proposal, if any (the scheduler lists them;
 * the service emits no event for it).
 */
export type CiDelivery =
  | { kind: "commit.created"; branch: string; openProposal?: { base_branch: string } | null }
  | { kind: "proposal.opened"; branch: string; base_branch: string }
  | { kind: "schedule"; minute: Date }
  | { kind: "manual" };

/**
 * The trigger types one delivery enqueues, one job each (SPEC "CI trigger mapping"); [] means
 * acknowledge and queue nothing.
 *
 * - commit → `push` when `on.push` is configured (it is when the file has no `on` block) and its
 *   branches match; plus `proposal_synchronized` when the branch has an open proposal and
 *   `on.proposal` is configured with base branches matching that proposal's base, the same
 *   filter that decides whether opening it runs CI.
 * - proposal opened → `proposal` when `on.proposal.base_branches` match the base branch.
 * - schedule → `schedule` when any `on.schedule[].cron` fires in that minute (one job, however
 *   many entries fire).
 * - manual → `manual`, whatever the `on` block says.
 */
export function triggersFor(config: CiConfig, event: CiDelivery): TriggerType[] {
  const { push, proposal, schedule } = config.on;
  switch (event.kind) {
    case "commit.created": {
      const out: TriggerType[] = [];
      if (push && matchesBranch(push.branches, event.branch)) out.push("push");
      const open = event.openProposal;
      if (open && proposal && matchesBranch(proposal.base_branches, open.base_branch))
        out.push("proposal_synchronized");
      return out;
    }
    case "proposal.opened":
      return proposal && matchesBranch(proposal.base_branches, event.base_branch) ? ["proposal"] : [];
    case "schedule":
      return schedule.some((s) => cronMatches(s.cron, event.minute)) ? ["schedule"] : [];
    case "manual":
      return ["manual"];
  }
}

/**
 * The checks a job runs, in file order: those whose `if:` holds for the job's event. A skipped
 * check is left out, so no check run is posted for it.
 */
export function checksToRun(config: CiConfig, event: IfEvent): CiCheck[] {
  return config.checks.filter((c) => evaluateIf(c.condition, event));
}
