import { setTimeout as realSleep } from "node:timers/promises";

/**
 * Where time-dependent decisions get "now". Webhook delivery (due rows, backoff, suspension,
 * retention) asks the context's clock and passes the answer to SQL as a parameter, never the
 * database's `now()`, so tests move time forward instead of sleeping.
 */
export interface Clock {
  now(): Date;
  /** Resolves once `ms` milliseconds have passed on this clock (the CI reaper's pause between passes). */
  sleep(ms: number): Promise<void>;
}

/** The real time. */
export const systemClock: Clock = { now: () => new Date(), sleep: (ms) => realSleep(ms) };

/** A clock that moves only when told to: for tests and benchmarks of time-dependent behaviour. */
export class ManualClock implements Clock {
  private ms: number;
  /** Sleepers waiting for the clock to reach their time, woken by `advance` and `set`. */
  private sleepers: { until: number; wake: () => void }[] = [];

  constructor(start: Date = new Date()) {
    this.ms = start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  /** Resolves when `advance` or `set` has moved the clock `ms` past now; never on its own. */
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((wake) => this.sleepers.push({ until: this.ms + ms, wake }));
  }

  /** How many `sleep`s are waiting: a test sees that the code under test has started to wait. */
  get sleeping(): number {
    return this.sleepers.length;
  }

  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError("a clock only moves forward");
    this.ms += ms;
    this.wakeDue();
  }

  /** Moves the clock forward by `s` seconds. */
  advanceSeconds(s: number): void {
    this.advance(s * 1000);
  }

  /** Sets the clock to `to`. */
  set(to: Date): void {
    this.ms = to.getTime();
    this.wakeDue();
  }

  private wakeDue(): void {
    const due = this.sleepers.filter((s) => s.until <= this.ms);
    this.sleepers = this.sleepers.filter((s) => s.until > this.ms);
    for (const s of due) s.wake();
  }
}
