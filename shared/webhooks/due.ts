import type { Clock } from "../clock.ts";

// setTimeout's longest delay (about 24.8 days); backoff stops at one hour, far below it.
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * One timer that calls `fire` when the earliest retry known to a deliverer falls due, so a retry
 * goes out when its backoff ends instead of at the next sweep (which made retries up to a sweep
 * interval late). `at` only ever brings the timer forward; once it fires, the deliverer reads
 * the next earliest time from the outbox and arms it again. The delay is measured on the
 * deliverer's clock, the one that also decides what is due.
 */
export class DueTimer {
  private readonly clock: Clock;
  private readonly fire: () => void;
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(clock: Clock, fire: () => void) {
    this.clock = clock;
    this.fire = fire;
  }

  /** Fires at `when` (at once when it has passed), unless it is already set to fire no later. */
  at(when: Date): void {
    const ms = when.getTime();
    if (this.closed || ms >= this.dueAt) return;
    clearTimeout(this.timer);
    this.dueAt = ms;
    const delay = Math.min(Math.max(ms - this.clock.now().getTime(), 0), MAX_DELAY_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dueAt = Number.POSITIVE_INFINITY;
      this.fire();
    }, delay);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
