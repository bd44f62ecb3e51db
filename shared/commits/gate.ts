/**
 * Runs work one at a time per key, within this process. Commits to one repo serialize on its
 * counter row (and on their branch row) anyway; when many of them wait for those row locks
 * inside PostgreSQL, every commit wakes all the waiters, which re-check the row and go back to
 * sleep — a stampede that doubled PostgreSQL's CPU per commit with 16 clients on one repo. The
 * gate keeps them waiting here instead, so at most one transaction per instance waits on the
 * rows. Correctness does not depend on it: across instances the row locks still decide.
 */
export class KeyedGate {
  readonly #tails = new Map<number, Promise<void>>();

  /** Waits for the turn of `key`, in arrival order; call the function it answers to end the turn. */
  async enter(key: number): Promise<() => void> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.#tails.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }

  async run<T>(key: number, work: () => Promise<T>): Promise<T> {
    const leave = await this.enter(key);
    try {
      return await work();
    } finally {
      leave();
    }
  }
}
