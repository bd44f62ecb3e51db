import { createHash, createHmac, randomUUID } from "node:crypto";
import { archiveSigningKey, requireSignedUrl } from "../../archives/presign.ts";
import type { AppContext } from "../../context.ts";
import { fail } from "../../errors.ts";
import { runnerUrl } from "../urls.ts";

/**
 * Check logs (SPEC: `POST /repos/{name}/-/check/{check_name}/logs`). A log is kept in the log
 * store (a directory, or a GCS bucket) under its job, one per check, and recorded in `ci_logs`.
 * Its URL is the scheduler's log proxy, `GET {RUNNER_URL}/run/{job}/logs/{check}`, which answers a
 * reader of the repo with a redirect to a short-lived signed URL of the stored log, so a browser
 * or `curl -L` can open it without handing credentials to wherever it is stored.
 */

/** How long the signed URL a log redirect leads to stays valid. */
export const LOG_URL_TTL_SECONDS = 15 * 60;

/** The path of a check's log on the scheduler; the check name keeps its `/`s. */
export const logPath = (jobId: string, checkName: string) =>
  `/run/${jobId}/logs/${checkName.split("/").map(encodeURIComponent).join("/")}`;

// Keys do not embed the check name (it may hold any character a check name may) but its hash,
// and each upload gets a key of its own: the GCS store never overwrites an object (its keys are
// meant to be content addresses), so a replacement is a new object and the old one is deleted.
const objectKey = (jobId: string, checkName: string) =>
  `ci-logs/${jobId}/${createHash("sha256").update(checkName, "utf8").digest("hex")}/${randomUUID()}`;

/**
 * Partial uploads (the log so far of a running check, docs/ci-worker.md "Logs") a check may make
 * per minute: the worker's cadence is one every 2 s at most (30), so this leaves it slack and
 * still bounds what one job can make the server store.
 */
export const PARTIAL_UPLOADS_PER_MINUTE = 40;

// `previous` reads the statement's snapshot, so it sees the row as it was before the upsert. A
// whole log always replaces; a partial one only replaces a partial one, within its minute's cap
// (the WHERE holds the guard, so two racing uploads cannot both pass it).
const log_upsert = `
  WITH previous AS (
    SELECT object_key FROM ci_logs WHERE job_id = $1 AND check_name = $2),
  upserted AS (
    INSERT INTO ci_logs (job_id, check_name, object_key, content_type, bytes, uploaded_at, final,
                         partial_uploads, partial_window_start, attempt, sha256)
    VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7::boolean, CASE WHEN $7 THEN 0 ELSE 1 END,
            CASE WHEN $7 THEN NULL ELSE $6::timestamptz END, $9::int, $10::bytea)
    ON CONFLICT (job_id, check_name) DO UPDATE
      SET object_key = EXCLUDED.object_key, content_type = EXCLUDED.content_type,
          sha256 = EXCLUDED.sha256,
          bytes = EXCLUDED.bytes, uploaded_at = EXCLUDED.uploaded_at, final = EXCLUDED.final,
          attempt = EXCLUDED.attempt,
          partial_uploads = CASE WHEN EXCLUDED.final THEN ci_logs.partial_uploads
            WHEN ci_logs.partial_window_start > $6 - interval '1 minute' THEN ci_logs.partial_uploads + 1
            ELSE 1 END,
          partial_window_start = CASE WHEN EXCLUDED.final THEN ci_logs.partial_window_start
            WHEN ci_logs.partial_window_start > $6 - interval '1 minute' THEN ci_logs.partial_window_start
            ELSE $6 END
      WHERE EXCLUDED.final OR ((NOT ci_logs.final OR ci_logs.attempt IS DISTINCT FROM EXCLUDED.attempt)
        AND (ci_logs.partial_window_start IS NULL
        OR ci_logs.partial_window_start <= $6 - interval '1 minute' OR ci_logs.partial_uploads < $8))
    RETURNING 1)
  SELECT (SELECT object_key FROM previous) AS replaced, (SELECT count(*) FROM upserted)::int AS stored`;

const log_state = `
  SELECT final, attempt, partial_uploads, partial_window_start FROM ci_logs WHERE job_id = $1 AND check_name = $2`;

interface LogUpload {
  jobId: string;
  checkName: string;
  body: Buffer;
  contentType: string;
  /** False for the log so far of a running check (default true: the whole log). */
  final?: boolean;
  /** The job's attempt that uploads it: a partial upload is refused only over its own whole log. */
  attempt?: number;
}

/** Why a partial upload may not be stored now: the whole log is in, or the minute's cap is reached. */
async function refusePartial(ctx: AppContext, log: LogUpload): Promise<void> {
  const { rows } = await ctx.pool.query(log_state, [log.jobId, log.checkName]);
  const row = rows[0] as
    | { final: boolean; attempt: number | null; partial_uploads: number; partial_window_start: Date | null }
    | undefined;
  if (!row) return;
  const checkName = log.checkName;
  if (row.final && row.attempt === (log.attempt ?? null))
    fail(
      "LOG_FINAL",
      `the whole log of '${checkName}' is already stored; it is not replaced by a partial one`,
    );
  const windowOpen =
    row.partial_window_start !== null &&
    row.partial_window_start.getTime() > ctx.clock.now().getTime() - 60_000;
  if (windowOpen && row.partial_uploads >= PARTIAL_UPLOADS_PER_MINUTE)
    fail(
      "LOG_UPLOADS_LIMITED",
      `at most ${PARTIAL_UPLOADS_PER_MINUTE} partial uploads of a check's log a minute; try again later`,
    );
}

/**
 * Stores (or replaces) the log of a job's check and returns its URL. `final: false` is the log so
 * far of a running check: refused once the whole log is in, and past the per-minute cap.
 */
export async function storeLog(ctx: AppContext, log: LogUpload): Promise<string> {
  const final = log.final ?? true;
  // Checked first so that a refused upload costs no write to the store; the upsert checks again.
  if (!final) await refusePartial(ctx, log);
  const key = objectKey(log.jobId, log.checkName);
  await ctx.ciLogs.put(key, log.body);
  const { rows } = await ctx.pool.query(log_upsert, [
    log.jobId,
    log.checkName,
    key,
    log.contentType,
    log.body.length,
    ctx.clock.now(),
    final,
    PARTIAL_UPLOADS_PER_MINUTE,
    log.attempt ?? null,
    // The digest a job's attested verdict names as its log's (shared/attestations/).
    createHash("sha256").update(log.body).digest(),
  ]);
  const row = rows[0] as { replaced: string | null; stored: number };
  // Best effort: a leftover object is only storage, never read again.
  const unused = row.stored === 1 ? row.replaced : key;
  if (unused) await ctx.ciLogs.delete(unused).catch((err) => ctx.log.warn({ err }, "old ci log not deleted"));
  if (row.stored === 0) {
    await refusePartial(ctx, log);
    fail("LOG_UPLOADS_LIMITED", "the partial log was not stored; try again later");
  }
  return `${runnerUrl(ctx)}${logPath(log.jobId, log.checkName)}`;
}

const log_select = `
  SELECT object_key, content_type, final, bytes::int AS bytes FROM ci_logs WHERE job_id = $1 AND check_name = $2`;

interface StoredLog {
  key: string;
  contentType: string;
  /** False while it is the log so far of a running check. */
  final: boolean;
  bytes: number;
}

/** Where a job's check log is kept, and its type; null when none was uploaded. */
export async function findLog(ctx: AppContext, jobId: string, checkName: string): Promise<StoredLog | null> {
  const { rows } = await ctx.pool.query(log_select, [jobId, checkName]);
  const row = rows[0];
  if (!row) return null;
  return {
    key: row.object_key as string,
    contentType: row.content_type as string,
    final: row.final as boolean,
    bytes: row.bytes as number,
  };
}

/** Where a job's check log is kept, and its type; LOG_NOT_FOUND when none was uploaded. */
export async function requireLog(ctx: AppContext, jobId: string, checkName: string): Promise<StoredLog> {
  const log = await findLog(ctx, jobId, checkName);
  if (!log) fail("LOG_NOT_FOUND", `job ${jobId} has no log for '${checkName}'`);
  return log;
}

export const withBody = async (ctx: AppContext, log: StoredLog) => ({
  body: await ctx.ciLogs.get(log.key),
  contentType: log.contentType,
  final: log.final,
});

/** A stored log's bytes and type. */
export async function readLog(ctx: AppContext, jobId: string, checkName: string) {
  return withBody(ctx, await requireLog(ctx, jobId, checkName));
}

/** A stored log's bytes and type, or null while none was uploaded (a check that has just started). */
export async function readLogIfAny(ctx: AppContext, jobId: string, checkName: string) {
  const log = await findLog(ctx, jobId, checkName);
  return log ? withBody(ctx, log) : null;
}

// Signed under the presigned-archive key, with its own first line so that no log signature can
// ever pass as an archive signature or the other way round.
const logSignature = (key: Buffer, jobId: string, checkName: string, expires: number) =>
  createHmac("sha256", key).update(`ci-log\n${jobId}\n${checkName}\n${expires}`, "utf8").digest();

/** The signed, credential-free URL of a stored log, valid for LOG_URL_TTL_SECONDS. */
export async function signedLogUrl(ctx: AppContext, jobId: string, checkName: string): Promise<string> {
  const expires = Math.floor(ctx.clock.now().getTime() / 1000) + LOG_URL_TTL_SECONDS;
  const sig = logSignature(await archiveSigningKey(ctx), jobId, checkName, expires).toString("hex");
  return `${runnerUrl(ctx)}${logPath(jobId, checkName)}?${new URLSearchParams({ expires: String(expires), sig })}`;
}

/** Checks a signed log URL: the signature first (constant time), then its expiry. */
export async function verifyLogSignature(
  ctx: AppContext,
  q: { jobId: string; checkName: string; expires: number; sig: string },
): Promise<void> {
  const expected = logSignature(await archiveSigningKey(ctx), q.jobId, q.checkName, q.expires);
  requireSignedUrl("log URL", expected, q, ctx.clock.now().getTime());
}
