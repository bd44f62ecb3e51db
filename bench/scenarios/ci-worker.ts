import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { RUNNER_SUBSCRIPTION } from "../../shared/ci/scheduler/webhook.ts";
import { signature } from "../../shared/webhooks/send.ts";

/** What the bench reads of a claimed job. */
export interface ClaimedJob {
  id: string;
  branch: string;
  sequence: number;
  queued_at: string;
}

/** One `POST /claim` answer, and when it arrived (performance.now()). */
export interface Answer {
  status: number;
  job?: ClaimedJob;
  at: number;
}

export type Claim = () => Promise<Answer>;

/**
 * A raw POST over keep-alive sockets: status, body text and arrival time; never throws on a status.
 * Raw on purpose, not the typed client: /claim and the signed /webhook deliveries are measured as a
 * worker or a sender makes them, with their own headers (worker token, a signature over the exact
 * body bytes) and every status answered, which the library's JSON calls don't carry.
 */
export function rawPoster(baseUrl: string) {
  const base = new URL(baseUrl);
  if (base.hostname !== "127.0.0.1")
    throw new Error(`the bench only talks to 127.0.0.1, not ${base.hostname}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  return (path: string, headers: Record<string, string>, body = Buffer.alloc(0)) =>
    new Promise<{ status: number; text: string; at: number }>((resolve, reject) => {
      const req = http.request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method: "POST",
          path,
          headers: { ...headers, "content-length": body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString("utf8"),
              at: performance.now(),
            }),
          );
        },
      );
      req.setTimeout(60_000, () => req.destroy(new Error(`POST ${path}: timed out`)));
      req.on("error", reject);
      req.end(body);
    });
}

/** `POST /claim` as a worker (the static token): 200 with the job, or 204; anything else throws. */
export function workerClient(baseUrl: string, token: string): Claim {
  const post = rawPoster(baseUrl);
  const headers = { authorization: `Bearer ${token}` };
  return async () => {
    const res = await post("/claim", headers);
    if (res.status === 200) return { status: 200, job: JSON.parse(res.text) as ClaimedJob, at: res.at };
    if (res.status === 204) return { status: 204, at: res.at };
    throw new Error(`POST /claim: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  };
}

/**
 * `POST /webhook` as the server's own webhook worker sends it: a commit.created CloudEvent signed
 * with the scheduler's subscription secret (read from the database). Resolves to the jobs queued.
 */
export async function webhookPoster(baseUrl: string, db: pg.Client) {
  const { rows } = await db.query(`SELECT secret FROM subscriptions WHERE system_name = $1`, [
    RUNNER_SUBSCRIPTION,
  ]);
  const secret = rows[0]?.secret as string | undefined;
  if (!secret) throw new Error("the CI scheduler's subscription has no secret");
  const post = rawPoster(baseUrl);
  return async (event: { repo: string; branch: string; sequence: number }) => {
    const body = Buffer.from(
      JSON.stringify({
        specversion: "1.0",
        type: "com.svc.commit.created",
        source: `/repos/${event.repo}`,
        id: crypto.randomUUID(),
        time: new Date().toISOString(),
        datacontenttype: "application/json",
        data: event,
      }),
    );
    const res = await post(
      "/webhook",
      {
        "content-type": "application/json",
        "x-svc-signature": signature(secret, body),
      },
      body,
    );
    if (res.status !== 200) throw new Error(`POST /webhook: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    return (JSON.parse(res.text) as { jobs: unknown[] }).jobs.length;
  };
}

export const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

// Claimed jobs are marked passed once measured: a claim the bench never completes would otherwise
// be re-queued by the reaper after 2 minutes, into the middle of a later loop.
const jobs_finish = `
  UPDATE ci_jobs SET status = 'passed', completed_at = now(), request_token_sha256 = NULL
  WHERE status = ANY ($2::text[]) AND repo_id = (SELECT id FROM repos WHERE name = $1)`;
const queued_count = `SELECT count(*)::int AS n FROM ci_jobs WHERE status = 'queued'`;

export async function finishClaimed(db: pg.Client, repo: string): Promise<void> {
  await db.query(jobs_finish, [repo, ["claimed"]]);
}

/** Marks every open job of `repo` passed, queued ones too: the queue is empty afterwards. */
export async function finishAll(db: pg.Client, repo: string): Promise<void> {
  await db.query(jobs_finish, [repo, ["queued", "claimed"]]);
}

export async function queuedJobs(db: pg.Client): Promise<number> {
  return (await db.query(queued_count)).rows[0].n;
}

/** Waits until at least `n` jobs are queued; false after `seconds`. */
export async function queuedAtLeast(db: pg.Client, n: number, seconds: number): Promise<boolean> {
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    if ((await queuedJobs(db)) >= n) return true;
    await sleep(10);
  }
  return false;
}

/** Claims until 204 and marks what it got passed: the queue is empty afterwards. */
export async function drain(db: pg.Client, claim: Claim, repo: string): Promise<void> {
  for (let more = true; more; ) more = (await claim()).job !== undefined;
  await finishClaimed(db, repo);
}
