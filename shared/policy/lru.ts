/**
 * A small least-recently-used map. Map iteration order is insertion order, so re-inserting on
 * every hit keeps the oldest entry first and eviction is O(1). Written with erasable TypeScript
 * only: the policy worker loads it with Node's own type stripping.
 */
export class Lru<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();

  constructor(max: number) {
    if (!(max >= 1)) throw new RangeError(`an LRU needs room for at least one entry, got ${max}`);
    this.#max = max;
  }

  /** The value for `key`, marking it as the most recently used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  /** Stores `value`, evicting the least recently used entry when full. */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next().value as K;
      this.#map.delete(oldest);
    }
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  get size(): number {
    return this.#map.size;
  }
}
