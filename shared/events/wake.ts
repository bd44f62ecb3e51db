import pg from "pg";
import { clientConfig, type DatabaseTarget } from "../db/target.ts";
import type { Logger } from "../log.ts";
import { EVENTS_CHANNEL } from "./notify.ts";

/** What one step found: nothing more to do, more right away, or events waiting behind a running transaction. */
export type StepResult = "idle" | "more" | "held";

export interface WakeLoopOptions {
  databaseUrl: DatabaseTarget;
  /** Shown in pg_stat_activity as application_name. */
  name: string;
  log: Logger;
  /** Runs whenever the loop wakes, never twice at once, on the loop's own connection. */
  step: (client: pg.Client) => Promise<StepResult>;
  /** Runs on every (re)connection, after LISTEN. */
  onConnect?: (client: pg.Client) => Promise<void>;
  sweepMs: number;
  /**
   * The least time from one step's start to the next, unless a step found more at once: a loop
   * that need not answer within milliseconds (the auto-merge relay) then reads a burst of events
   * in a few large batches rather than one small batch per commit. Default 0.
   */
  minStepIntervalMs?: number;
}

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const HELD_RETRY_MIN_MS = 10;
// A wake-up waits this long before its step, so the NOTIFYs of a burst of commits (hundreds a
// second) become one read instead of one read each.
const COALESCE_MS = 3;

/**
 * One dedicated connection that LISTENs on the events channel and runs `step` on every NOTIFY,
 * on a sweep timer (so a lost notification only delays), and again shortly when events wait
 * behind a running transaction. A dropped connection is re-opened with backoff; after a reconnect
 * the loop wakes at once, since notifications sent meanwhile are lost.
 */
export class WakeLoop {
  private client: pg.Client | undefined;
  private running = false;
  private pending = false;
  private closed = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private heldDelay = HELD_RETRY_MIN_MS;
  private reconnectDelay = RECONNECT_MIN_MS;
  private current: Promise<void> = Promise.resolve();
  /** The loop's own waits (coalescing, spacing): `close` ends them rather than waiting them out. */
  private readonly pauses = new Set<() => void>();
  /** When the last step started (performance.now()), for `minStepIntervalMs`. */
  private lastStepAt = Number.NEGATIVE_INFINITY;
  private readonly opts: WakeLoopOptions;

  constructor(opts: WakeLoopOptions) {
    this.opts = opts;
  }

  async start(): Promise<void> {
    await this.connect();
    this.armSweep();
  }

  /** Sets the sweep interval (tests shorten or lengthen it). */
  setSweep(ms: number): void {
    this.opts.sweepMs = ms;
    this.armSweep();
  }

  private armSweep(): void {
    clearInterval(this.sweepTimer);
    if (this.closed) return;
    this.sweepTimer = setInterval(() => this.wake(), this.opts.sweepMs);
    this.sweepTimer.unref();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      ...clientConfig(this.opts.databaseUrl),
      application_name: this.opts.name,
    });
    client.on("error", () => {}); // reported through "end"
    await client.connect();
    client.on("notification", () => this.wake());
    client.once("end", () => this.dropped(client));
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    await this.opts.onConnect?.(client);
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.reconnectDelay = RECONNECT_MIN_MS;
    this.wake();
  }

  private dropped(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.closed) return;
    this.opts.log.warn({ loop: this.opts.name }, "event listener connection lost; reconnecting");
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
    setTimeout(() => {
      if (this.closed) return;
      this.connect().catch((err) => {
        this.opts.log.warn({ loop: this.opts.name, err }, "event listener could not reconnect");
        this.scheduleReconnect();
      });
    }, delay).unref();
  }

  /** Runs `step` soon; coalesces wake-ups that arrive while it runs into one more run. */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.pending = true;
      return;
    }
    this.running = true;
    this.current = this.pause(COALESCE_MS)
      .then(() => this.run())
      .finally(() => {
        this.running = false;
      });
  }

  private async run(): Promise<void> {
    let result: StepResult | undefined;
    do {
      if (result !== "more") await this.spaceOut();
      this.pending = false;
      const client = this.client;
      if (!client || this.closed) return;
      this.lastStepAt = performance.now();
      try {
        result = await this.opts.step(client);
      } catch (err) {
        if (this.closed) return;
        this.opts.log.warn(
          { loop: this.opts.name, err },
          "event loop step failed; retrying on the next sweep",
        );
        return;
      }
      if (result === "more") this.pending = true;
      else if (result === "held") this.retryHeld();
      else this.heldDelay = HELD_RETRY_MIN_MS;
    } while (this.pending && !this.closed);
  }

  /**
   * Waits out what is left of `minStepIntervalMs` since the last step began. A timer may fire up
   * to a millisecond early (whole milliseconds, measured from the event loop's cached time), so
   * the time left is looked at again after it.
   */
  private async spaceOut(): Promise<void> {
    for (;;) {
      const wait = this.lastStepAt + (this.opts.minStepIntervalMs ?? 0) - performance.now();
      if (wait <= 0 || this.closed) return;
      await this.pause(Math.ceil(wait));
    }
  }

  /**
   * Resolves after `ms`, or at once when the loop closes: closing never waits out a spacing, and
   * a wait whose timer can no longer fire (a test that swapped in fake timers and back) cannot
   * hold `close` for ever.
   */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.pauses.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.pauses.add(done);
    });
  }

  // Events are committed but wait behind an older transaction still running: look again soon,
  // backing off up to the sweep interval (that transaction's own NOTIFY usually comes first).
  private retryHeld(): void {
    if (this.retryTimer) return;
    const delay = this.heldDelay;
    this.heldDelay = Math.min(this.heldDelay * 2, this.opts.sweepMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.wake();
    }, delay);
    this.retryTimer.unref();
  }

  /** The loop's connection, for tests that cut it. */
  get connection(): pg.Client | undefined {
    return this.client;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    clearTimeout(this.retryTimer);
    for (const done of [...this.pauses]) done();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
    await this.current.catch(() => {});
  }
}
