import type { DatabaseTarget } from "../db/target.ts";
import { WakeLoop } from "../events/wake.ts";
import { type AttemptDeps, recordRow, sendRow } from "./attempt.ts";
import { DueTimer } from "./due.ts";
import {
  cleanupEvery,
  type Delivery,
  deleteDelivered,
  type LeasedRow,
  leaseDue,
  nextDueAfter,
  recordDelivered,
  releaseLeases,
} from "./outbox.ts";

/** Tuning of the local worker; the defaults suit one instance of the service. */
export interface WorkerTuning {
  /** Most rows leased by one pass. */
  batch: number;
  /** Most rows of one lane (a subscription, or a lane of a system subscription) leased by one pass (sent one after another). */
  perSubscription: number;
  /** Most lanes this worker sends on at once. */
  maxSubscriptions: number;
  /**
   * How often the worker looks for due rows without being woken: the safety net for a lost
   * notification, and how often it reads the outbox's earliest retry time (retries themselves are
   * woken by a timer at their due time, not by this sweep).
   */
  pollMs: number;
  /** How often delivered rows past their retention are deleted. */
  cleanupMs: number;
}

export const defaultTuning: WorkerTuning = {
  batch: 100,
  perSubscription: 10,
  maxSubscriptions: 32,
  pollMs: 1000,
  cleanupMs: 60_000,
};

export interface WorkerDeps extends AttemptDeps {
  databaseUrl: DatabaseTarget;
}

/**
 * The local webhook deliverer: a PostgreSQL-backed queue worker in the process.
 *
 * It wakes on NOTIFY quire_events (sent after every commit that recorded events), on resume, when
 * a retry falls due (a timer, see `armForNextRetry`), and every `pollMs` as a safety net; each
 * wake leases due rows (`leaseDue`) and sends them outside any transaction, one subscription's
 * rows in order, different subscriptions in parallel, recording each outcome under its lease. Any number of instances share one database safely.
 * Tests drive it with `runOnce()` and `drain()` and a manual clock.
 */
export class PostgresWebhookWorker {
  private loop: WakeLoop | undefined;
  private cleanupTimer: NodeJS.Timeout | undefined;
  private readonly sending = new Map<string, Promise<void>>();
  private leasing: Promise<unknown> = Promise.resolve();
  private readonly stopping = new AbortController();
  /** Wakes the loop when the earliest retry falls due; set by `start`. */
  private due: DueTimer | undefined;
  /** Real time (ms) of the last read of the earliest retry, and whether one is wanted at once. */
  private lastDueRead = Number.NEGATIVE_INFINITY;
  private readDueNow = true;
  private readonly deps: WorkerDeps;
  private readonly tuning: WorkerTuning;

  constructor(deps: WorkerDeps, tuning: WorkerTuning = defaultTuning) {
    this.deps = deps;
    this.tuning = tuning;
  }

  /** Starts the wake-ups: LISTEN, the poll and the retention cleanup. */
  async start(): Promise<void> {
    this.due = new DueTimer(this.deps.clock, () => {
      this.readDueNow = true; // it may have fired a hair early, or another retry is next
      this.loop?.wake();
    });
    this.loop = new WakeLoop({
      databaseUrl: this.deps.databaseUrl,
      name: "quire-webhooks",
      log: this.deps.log,
      sweepMs: this.tuning.pollMs,
      step: async () => {
        if (this.sending.size >= this.tuning.maxSubscriptions) return "idle"; // a finishing send wakes us
        const now = this.deps.clock.now();
        const leased = (await this.leaseAndSend()).leased;
        await this.armForNextRetry(now);
        return leased >= this.tuning.batch ? "more" : "idle";
      },
    });
    await this.loop.start();
    this.cleanupTimer = cleanupEvery(this.tuning.cleanupMs, () => this.cleanup(), this.deps.log);
  }

  /**
   * Sets the due timer to the earliest retry in the outbox after `now` (the time this pass leased
   * by), once per sweep interval and whenever the timer has fired. A failure this worker
   * records sets the timer itself (`sendGroup`); this read covers retries it did not record: made
   * before a restart, or by another instance that stopped since. Every instance may wake for the
   * same row; the lease (SKIP LOCKED) lets exactly one send it.
   */
  private async armForNextRetry(now: Date): Promise<void> {
    if (!this.readDueNow && performance.now() - this.lastDueRead < this.tuning.pollMs) return;
    this.readDueNow = false;
    this.lastDueRead = performance.now();
    const at = await nextDueAfter(this.deps.pool, now);
    if (at) this.due?.at(at);
  }

  /** Looks for due rows soon (after a resume, or a commit this process made). */
  wake(): void {
    this.loop?.wake();
  }

  /**
   * Leases due rows and starts sending them. Passes of one worker never overlap, so a
   * subscription is never started twice by it; `sent` settles when this pass's rows are done.
   */
  private leaseAndSend(): Promise<{ leased: number; sent: Promise<void> }> {
    const pass = this.leasing.then(async () => {
      const room = this.tuning.maxSubscriptions - this.sending.size;
      if (room <= 0 || this.stopping.signal.aborted) return { leased: 0, sent: Promise.resolve() };
      const rows = await leaseDue(this.deps.pool, {
        now: this.deps.clock.now(),
        batch: this.tuning.batch,
        perSubscription: this.tuning.perSubscription,
        leaseSeconds: this.deps.send.timeoutMs / 1000 + 5,
        busy: [...this.sending.keys()],
        admins: this.deps.admins,
      });
      const groups = new Map<string, LeasedRow[]>();
      for (const row of rows) groups.set(row.lane, [...(groups.get(row.lane) ?? []), row]);
      const started: Promise<void>[] = [];
      for (const [lane, group] of groups) {
        const run = this.sendGroup(group).finally(() => {
          this.sending.delete(lane);
          this.loop?.wake();
        });
        this.sending.set(lane, run);
        started.push(run);
      }
      return { leased: rows.length, sent: Promise.all(started).then(() => {}) };
    });
    this.leasing = pass.catch(() => {});
    return pass;
  }

  /**
   * One subscription's leased rows, in event order. Deliveries are recorded together when the run
   * ends (one statement, not one per row); a failure is recorded at once, before the next send,
   * since a 10th failed attempt suspends the subscription and the rest of the run then goes back
   * unsent. Stopping abandons the send in flight and hands it back with the rest. A crash before
   * the run's record resends its deliveries after their leases, with the same event ids.
   */
  private async sendGroup(rows: LeasedRow[]): Promise<void> {
    const delivered: Delivery[] = [];
    const flush = () => recordDelivered(this.deps.pool, delivered.splice(0));
    let i = 0;
    try {
      for (; i < rows.length; i++) {
        const row = rows[i];
        if (row === undefined || this.stopping.signal.aborted) break; // row is there: i < rows.length
        const outcome = await sendRow(this.deps, row, this.stopping.signal);
        if (!outcome.ok && this.stopping.signal.aborted) break; // abandoned, not failed
        if (outcome.ok) {
          delivered.push({ row, status: outcome.status, at: this.deps.clock.now() });
          continue;
        }
        await flush();
        const recorded = await recordRow(this.deps, row, outcome);
        if (recorded.retryAt) this.due?.at(recorded.retryAt);
        if (recorded.suspended) {
          i++;
          break;
        }
      }
      await flush();
      await releaseLeases(this.deps.pool, rows.slice(i));
    } catch (err) {
      // The database failed us: the leases run out and the rows are sent again, same event ids.
      this.deps.log.warn({ err, outbox_id: rows[i]?.id }, "webhook outcomes could not be recorded");
    }
  }

  /** One pass: leases what is due now (by the clock) and waits until those rows are sent. */
  async runOnce(): Promise<number> {
    const { leased, sent } = await this.leaseAndSend();
    await sent;
    return leased;
  }

  /** Passes until nothing is due and nothing is in flight. */
  async drain(): Promise<void> {
    for (;;) {
      const leased = await this.runOnce();
      const inFlight = [...this.sending.values()];
      await Promise.all(inFlight);
      if (leased === 0 && inFlight.length === 0) return;
    }
  }

  /** Deletes delivered rows past their retention (by the clock); returns how many. */
  cleanup(): Promise<number> {
    return deleteDelivered(this.deps.pool, this.deps.clock.now());
  }

  /** Stops: no new leases; sends in flight are abandoned and their rows handed back. */
  async close(): Promise<void> {
    this.stopping.abort();
    this.due?.close();
    clearInterval(this.cleanupTimer);
    await this.loop?.close();
    await Promise.all([...this.sending.values()]);
    await this.leasing;
  }
}
