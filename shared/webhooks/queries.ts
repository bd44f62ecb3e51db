/**
 * SQL of the webhook outbox and subscriptions. Every time decision takes "now" as a parameter
 * (the deliverer's clock), never the database's now(), so tests move time instead of sleeping.
 */

/**
 * How many rows of one system subscription may be in flight at once. A person's subscription gets
 * its events one at a time in event order; the system subscription (the CI scheduler's) needs no
 * order, since each delivery queues its own jobs, so it is sent on this many lanes side by side.
 */
export const SYSTEM_LANES = 8;

// The lane of row `o` of subscription `s`: the subscription itself, or one of its lanes.
const lane_of = (o: string, s: string) =>
  `CASE WHEN ${s}.system_name IS NULL THEN ${o}.subscription_id::text
        ELSE ${o}.subscription_id::text || ':' || (${o}.id % ${SYSTEM_LANES}) END`;

// What a deliverer needs to send one row: the row's lease, the subscription's target, the event.
const leased_row = `o.id, o.subscription_id, ${lane_of("o", "s")} AS lane, o.attempts, o.lease_seq, s.url, s.secret,
  s.system_name IS NOT NULL AS trusted, e.id AS event_id, e.type, e.source, e.time, e.data`;

/**
 * True while subscription `s`'s creator may still have it: a global subscription's creator is
 * still a global admin (`$admins`, from configuration), a repo subscription's creator can still
 * read the repo (any repo role, any org role, or a global admin). Checked at send time, so a
 * reader who loses access stops receiving, as an SSE stream of theirs would be closed. A system
 * subscription (registered from the server's own configuration) has no person behind it.
 */
const creator_may_read = (
  admins: string,
) => `(s.system_name IS NOT NULL OR s.created_by = ANY (${admins}::text[]) OR (s.repo_id IS NOT NULL AND (
    EXISTS (SELECT 1 FROM repo_roles rr WHERE rr.repo_id = s.repo_id AND rr.identity = s.created_by)
    OR EXISTS (SELECT 1 FROM repos r JOIN org_members om ON om.org = r.owner
               WHERE r.id = s.repo_id AND om.identity = s.created_by))))`;

/**
 * Leases the due rows, oldest first, for one local worker. $1 now, $2 batch size, $3 subscriptions
 * this worker is already sending to, $4 lease seconds per row, $5 rows per subscription, $6 the
 * global admins. Due rows of a subscription whose creator may no longer read what it covers are
 * deleted instead: those events are not sent to it (later ones are, once access is back).
 *
 * SKIP LOCKED lets workers lease side by side without waiting on each other, and a leased row is
 * invisible to the others until its lease ends, so two workers never send the same attempt. A
 * subscription with a row in flight anywhere is skipped, so each receiver gets its events one at
 * a time in event order. A system subscription is split the same way into SYSTEM_LANES lanes by
 * row id, each lane one at a time. $3 is the lanes (subscription ids, or `<id>:<lane>`) this
 * worker is already sending on. The k-th row of one lane is leased for k lease periods, since the
 * worker sends them one after another (each attempt takes at most the timeout, shorter than one
 * period). Rows of suspended subscriptions are never leased: they are held until resume.
 */
export const outbox_lease_due = `
  WITH candidate AS (
    SELECT o.id, ${lane_of("o", "s")} AS lane, ${creator_may_read("$6")} AS allowed
    FROM webhook_outbox o
    JOIN subscriptions s ON s.id = o.subscription_id
    WHERE o.delivered_at IS NULL
      AND o.next_attempt_at <= $1::timestamptz
      AND (o.leased_until IS NULL OR o.leased_until <= $1::timestamptz)
      AND s.suspended_at IS NULL
      AND ${lane_of("o", "s")} <> ALL ($3::text[])
      AND NOT EXISTS (
        SELECT 1 FROM webhook_outbox b
        WHERE b.subscription_id = o.subscription_id AND b.delivered_at IS NULL
          AND (s.system_name IS NULL OR b.id % ${SYSTEM_LANES} = o.id % ${SYSTEM_LANES})
          AND b.leased_until IS NOT NULL AND b.leased_until > $1::timestamptz)
    ORDER BY o.id
    LIMIT $2
    FOR UPDATE OF o SKIP LOCKED),
  dropped AS (
    DELETE FROM webhook_outbox d USING candidate c WHERE d.id = c.id AND NOT c.allowed),
  ranked AS (
    SELECT id, row_number() OVER (PARTITION BY lane ORDER BY id) AS rank
    FROM candidate WHERE allowed)
  UPDATE webhook_outbox o
  SET attempts = o.attempts + 1,
      lease_seq = o.lease_seq + 1,
      leased_until = $1::timestamptz + ranked.rank * make_interval(secs => $4::double precision)
  FROM ranked, subscriptions s, events e
  WHERE o.id = ranked.id AND ranked.rank <= $5 AND s.id = o.subscription_id AND e.id = o.event_id
  RETURNING ${leased_row}`;

/**
 * Delivered rows, each only under the lease that sent it, and only once: $1 ids, $2 their leases,
 * $3 when each was delivered, $4 each receiver's status. One statement for a run of deliveries.
 */
export const outbox_update_delivered = `
  UPDATE webhook_outbox o
  SET delivered_at = r.delivered_at, leased_until = NULL, last_status = r.status, last_error = NULL
  FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::int[]) AS r (id, lease_seq, delivered_at, status)
  WHERE o.id = r.id AND o.lease_seq = r.lease_seq AND o.delivered_at IS NULL`;

/**
 * A failed attempt, under the lease that made it ($2): the row is due again at $4 (the backoff),
 * and when this was attempt $7 or later the subscription is suspended, in the same statement
 * (so in the same transaction). $3 now, $5 status, $6 error.
 */
export const outbox_update_failed = `
  WITH failed AS (
    UPDATE webhook_outbox
    SET leased_until = NULL, next_attempt_at = $4::timestamptz, last_status = $5, last_error = $6
    WHERE id = $1 AND lease_seq = $2 AND delivered_at IS NULL
    RETURNING subscription_id, attempts),
  suspended AS (
    UPDATE subscriptions s
    SET suspended_at = $3::timestamptz, failure_count = s.failure_count + 1
    FROM failed
    WHERE s.id = failed.subscription_id AND failed.attempts >= $7 AND s.suspended_at IS NULL
    RETURNING s.id)
  SELECT (SELECT count(*) FROM failed)::int AS recorded, (SELECT count(*) FROM suspended)::int AS suspended`;

/**
 * The earliest next_attempt_at after $1 of an undelivered row of a subscription that is not
 * suspended: a retry waiting for its time. Read by a local worker once per sweep (not per pass),
 * so a worker that did not record the failure itself (it restarted, or another instance did and
 * stopped) still wakes on time. It walks the undelivered rows (`webhook_outbox_pending`): a
 * backlog of thousands costs a few milliseconds once a second.
 */
export const outbox_select_next_due = `
  SELECT min(o.next_attempt_at) AS at
  FROM webhook_outbox o JOIN subscriptions s ON s.id = o.subscription_id
  WHERE o.delivered_at IS NULL AND o.next_attempt_at > $1::timestamptz AND s.suspended_at IS NULL`;

/**
 * Hands leased rows back unsent (the worker is stopping, or the subscription was just suspended):
 * the attempt did not happen, so it is not counted. $1 ids, $2 their leases.
 */
export const outbox_update_released = `
  UPDATE webhook_outbox o
  SET leased_until = NULL, attempts = greatest(o.attempts - 1, 0)
  FROM unnest($1::bigint[], $2::bigint[]) AS r (id, lease_seq)
  WHERE o.id = r.id AND o.lease_seq = r.lease_seq AND o.delivered_at IS NULL`;

/** Up to $2 delivered rows older than $1, oldest first. */
export const outbox_delete_delivered = `
  DELETE FROM webhook_outbox
  WHERE id IN (
    SELECT id FROM webhook_outbox WHERE delivered_at < $1::timestamptz ORDER BY delivered_at LIMIT $2)`;

/**
 * Cloud Tasks mode: reserves rows that have no task yet (or whose task never came), oldest first,
 * for one task each, scheduled at the row's next_attempt_at (or now). The reservation lasts until
 * $4 seconds after that time; a task that has not claimed the row by then is given up for a new
 * one. $1 now, $2 batch size, $3 one row id or NULL for any. Each row comes with its subscription's
 * system name and URL: a system subscription handled in a function of its own gets its task there.
 */
export const outbox_reserve_for_tasks = `
  WITH candidate AS (
    SELECT o.id, s.system_name, s.url
    FROM webhook_outbox o
    JOIN subscriptions s ON s.id = o.subscription_id
    WHERE o.delivered_at IS NULL
      AND (o.leased_until IS NULL OR o.leased_until <= $1::timestamptz)
      AND s.suspended_at IS NULL
      AND ($3::bigint IS NULL OR o.id = $3::bigint)
    ORDER BY o.id
    LIMIT $2
    FOR UPDATE OF o SKIP LOCKED)
  UPDATE webhook_outbox o
  SET lease_seq = o.lease_seq + 1,
      leased_until = greatest(o.next_attempt_at, $1::timestamptz) + make_interval(secs => $4::double precision)
  FROM candidate
  WHERE o.id = candidate.id
  RETURNING o.id, o.lease_seq, greatest(o.next_attempt_at, $1::timestamptz) AS schedule_at,
    candidate.system_name, candidate.url`;

/**
 * Cloud Tasks mode: the task for lease $2 of row $1 starts its attempt. Only that task, once (the
 * claim takes the next lease, so a duplicate execution of the same task finds nothing), and never
 * for a suspended subscription. $3 now, $4 lease seconds, $5 the global admins. A row whose
 * subscription's creator may no longer read what it covers is deleted instead (see the lease).
 * $6 the system subscription whose rows the caller handles itself, or NULL for a webhook sender,
 * which claims no row of the systems $7 (those handled elsewhere): a task that reaches the wrong
 * function is stale there, so an event is never sent to a URL meant for a task.
 */
export const outbox_claim_for_task = `
  WITH target AS (
    SELECT o.id, ${creator_may_read("$5")} AS allowed
    FROM webhook_outbox o JOIN subscriptions s ON s.id = o.subscription_id
    WHERE o.id = $1 AND o.lease_seq = $2 AND o.delivered_at IS NULL AND s.suspended_at IS NULL
      AND CASE WHEN $6::text IS NULL THEN coalesce(s.system_name <> ALL ($7::text[]), true)
               ELSE s.system_name = $6::text END
    FOR UPDATE OF o),
  dropped AS (
    DELETE FROM webhook_outbox d USING target t WHERE d.id = t.id AND NOT t.allowed)
  UPDATE webhook_outbox o
  SET attempts = o.attempts + 1,
      lease_seq = o.lease_seq + 1,
      leased_until = $3::timestamptz + make_interval(secs => $4::double precision)
  FROM target t, subscriptions s, events e
  WHERE o.id = t.id AND t.allowed AND s.id = o.subscription_id AND e.id = o.event_id
  RETURNING ${leased_row}`;

/** Cloud Tasks mode: a reservation whose task could not be created is handed back. */
export const outbox_update_unreserved = `
  UPDATE webhook_outbox SET leased_until = NULL WHERE id = $1 AND lease_seq = $2 AND delivered_at IS NULL`;

const subscription_columns = `id, repo, event_types, backend, url, secret, created_at, created_by,
  failure_count, suspended_at`;

export const subscription_insert = `
  INSERT INTO subscriptions (id, repo, repo_id, event_types, backend, url, secret, created_at, created_by)
  VALUES ($1::uuid, $2, $3, $4::text[], 'webhook', $5, $6, $7::timestamptz, $8)
  RETURNING ${subscription_columns}`;

/** Every subscription ($2 true: a global admin) or the caller's own ($1), oldest first. */
export const subscription_select_visible = `
  SELECT ${subscription_columns} FROM subscriptions
  WHERE $2::boolean OR created_by = $1
  ORDER BY created_at, id`;

/** Deletes subscription $1 if the caller ($2) created it or is a global admin ($3). */
export const subscription_delete_owned = `
  DELETE FROM subscriptions WHERE id = $1::uuid AND ($3::boolean OR created_by = $2)`;

/**
 * Resumes subscription $1 (creator $2 or global admin $3) at $4: the suspension is cleared, the
 * count reset, and every held row (the one that used up its attempts included) is due at once
 * with a fresh set of attempts. A subscription that is not suspended is left as it is. Returns a
 * row when the caller may resume it.
 */
export const subscription_update_resumed = `
  WITH target AS (
    SELECT id, suspended_at IS NOT NULL AS suspended FROM subscriptions
    WHERE id = $1::uuid AND ($3::boolean OR created_by = $2)
    FOR UPDATE),
  resumed AS (
    UPDATE subscriptions s SET suspended_at = NULL, failure_count = 0
    FROM target WHERE s.id = target.id AND target.suspended
    RETURNING s.id),
  released AS (
    UPDATE webhook_outbox o SET attempts = 0, next_attempt_at = $4::timestamptz, leased_until = NULL
    FROM resumed WHERE o.subscription_id = resumed.id AND o.delivered_at IS NULL
    RETURNING o.id)
  SELECT target.suspended, (SELECT count(*) FROM released)::int AS released FROM target`;

/**
 * A system subscription (registered from the server's own configuration, `system_name` $6): one
 * row per name, so a second start, or a second instance, updates the one row, and only when its
 * types, URL or secret changed. $1 a new id, $2 event types, $3 URL, $4 secret, $5 now.
 */
export const system_subscription_upsert = `
  INSERT INTO subscriptions (id, repo, repo_id, event_types, backend, url, secret, created_at, created_by, system_name)
  VALUES ($1, NULL, NULL, $2::text[], 'webhook', $3, $4, $5, $6, $6)
  ON CONFLICT (system_name) DO UPDATE
    SET event_types = EXCLUDED.event_types, url = EXCLUDED.url, secret = EXCLUDED.secret
    WHERE (subscriptions.event_types, subscriptions.url, subscriptions.secret)
      IS DISTINCT FROM (EXCLUDED.event_types, EXCLUDED.url, EXCLUDED.secret)
  RETURNING id::text`;

/** Removes the system subscription $1 (its undelivered rows go with it). */
export const system_subscription_delete = `DELETE FROM subscriptions WHERE system_name = $1`;
