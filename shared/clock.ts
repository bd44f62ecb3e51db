/**
 * Where time-dependent decisions get "now". Webhook delivery (due rows, backoff, suspension,
 * retention) asks the context's clock and passes the answer to SQL as a parameter, never the
 * database's `now()`, so tests move time forward instead of sleeping.
 */
export interface Clock {
  now(): Date;
}

/** The real time. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that moves only when told to: for tests and benchmarks of time-dependent behaviour. */
export class ManualClock implements Clock {
  private ms: number;

  constructor(start: Date = new Date()) {
    this.ms = start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError("a clock only moves forward");
    this.ms += ms;
  }

  /** Moves the clock forward by `s` seconds. */
  advanceSeconds(s: number): void {
    this.advance(s * 1000);
  }

  /** Sets the clock to `to`. */
  set(to: Date): void {
    this.ms = to.getTime();
  }
}
