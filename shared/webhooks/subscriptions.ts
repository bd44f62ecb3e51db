import { randomUUID } from "node:crypto";
import { requireRepoRole } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { AppContext } from "../context.ts";
import { fail } from "../errors.ts";
import type { CreateSubscriptionRequest } from "./api.ts";
import {
  subscription_delete_owned,
  subscription_insert,
  subscription_select_visible,
  subscription_update_resumed,
} from "./queries.ts";

/**
 * The wire shape of a subscription (spec "Event subscription"). `repo` and `event_types` are
 * omitted when the subscription covers every repo / every type; `config.secret` is omitted when
 * there is none, and otherwise returned as stored (the spec keeps it in plaintext).
 */
export interface SubscriptionRecord {
  id: string;
  repo?: string;
  event_types?: string[];
  backend: "webhook";
  config: { url: string; secret?: string };
  created_at: Date;
  created_by: string;
  failure_count: number;
  suspended_at: Date | null;
}

function toRecord(row: Record<string, unknown>): SubscriptionRecord {
  return {
    id: row["id"] as string,
    ...(row["repo"] === null ? {} : { repo: row["repo"] as string }),
    ...(row["event_types"] === null ? {} : { event_types: row["event_types"] as string[] }),
    backend: "webhook",
    config: {
      url: row["url"] as string,
      ...(row["secret"] === null ? {} : { secret: row["secret"] as string }),
    },
    created_at: row["created_at"] as Date,
    created_by: row["created_by"] as string,
    failure_count: row["failure_count"] as number,
    suspended_at: (row["suspended_at"] as Date | null) ?? null,
  };
}

/**
 * Creates a webhook subscription. With `repo`, the caller needs reader or higher on it (a repo it
 * may not read answers 404, as if absent) and the subscription is bound to that repo: deleting the
 * repo deletes it. Without `repo` it covers every repo and needs a global admin. The URL must be
 * http(s) and must not lead to a loopback, private, link-local or metadata address (checked after
 * DNS resolution; loopback and private pass with SVC_WEBHOOK_ALLOW_PRIVATE=true). Nothing is
 * written unless every check passes. An empty secret means no signature.
 */
export async function createSubscription(
  ctx: AppContext,
  actor: Actor,
  input: CreateSubscriptionRequest,
): Promise<SubscriptionRecord> {
  let repoId: number | null = null;
  if (input.repo !== undefined) {
    repoId = (await requireRepoRole(ctx.pool, input.repo, actor, "reader")).repo.id;
  } else if (!actor.globalAdmin) {
    fail("FORBIDDEN", "a subscription without a repo covers every repo and needs a global admin");
  }
  await ctx.webhooks.vetUrl(input.config.url);
  const secret = input.config.secret ? input.config.secret : null;
  try {
    const { rows } = await ctx.pool.query(subscription_insert, [
      randomUUID(),
      input.repo ?? null,
      repoId,
      input.event_types ?? null,
      input.config.url,
      secret,
      ctx.clock.now(),
      actor.identity,
    ]);
    return toRecord(rows[0]);
  } catch (err) {
    // The repo was deleted between the access check and the insert.
    if ((err as { code?: string }).code === "23503") fail("REPO_NOT_FOUND", `repo '${input.repo}' not found`);
    throw err;
  }
}

/** Every subscription for a global admin; everyone else sees their own. */
export async function listSubscriptions(ctx: AppContext, actor: Actor): Promise<SubscriptionRecord[]> {
  const { rows } = await ctx.pool.query(subscription_select_visible, [actor.identity, actor.globalAdmin]);
  return rows.map(toRecord);
}

const notFound = (id: string) => fail("SUBSCRIPTION_NOT_FOUND", `subscription '${id}' not found`);

/**
 * Deletes a subscription (its creator or a global admin) with its undelivered rows. Anyone else
 * gets 404, exactly as for an id that does not exist, so others' subscriptions stay invisible.
 */
export async function deleteSubscription(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const res = await ctx.pool.query(subscription_delete_owned, [id, actor.identity, actor.globalAdmin]);
  if (res.rowCount !== 1) notFound(id);
}

/**
 * Resumes a suspended subscription (its creator or a global admin): the suspension is cleared,
 * failure_count reset to 0, and every event held meanwhile, the one whose row used up its
 * attempts included, is due at once with a fresh set of attempts; the deliverers are woken. A
 * subscription that is not suspended is left unchanged.
 */
export async function resumeSubscription(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const { rows } = await ctx.pool.query(subscription_update_resumed, [
    id,
    actor.identity,
    actor.globalAdmin,
    ctx.clock.now(),
  ]);
  if (rows.length === 0) notFound(id);
  if (rows[0].suspended) await ctx.webhooks.wake();
}
