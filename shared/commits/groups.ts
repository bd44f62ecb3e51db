import { DomainError } from "../errors.ts";
import { KeyedGate } from "./gate.ts";

/**
 * Group commit (docs/architecture.md, "Group commit"): commits that arrive for one branch while
 * the commit before them holds the repo's turn are written together, in one transaction, by the
 * first of them (the leader) once the turn comes. They then share one BEGIN, one statement for
 * their contents and one COMMIT with its WAL flush, and the branch row's lock is taken once for
 * them all. Each still gets its own sequence, event and answer, in arrival order.
 *
 * A group is all or nothing, so when a commit of a group is refused (a 4xx, decided before
 * COMMIT), the group rolls back and each of its commits runs again alone, where only the refused
 * one fails. Any other failure (the database gone, COMMIT's answer lost) is every member's: it is
 * not known whether the group committed, so none of them may be written again.
 */

/** A place in the repo's queue of turns, taken ahead; resolves to the function that ends the turn. */
type Ticket = Promise<() => void>;

/**
 * How a member's commit ended: its result or error, or run again alone (its group was refused),
 * with its place in the queue taken in the group's order.
 */
type Outcome<R> =
  | { kind: "done"; value: R }
  | { kind: "failed"; error: unknown }
  | { kind: "alone"; ticket: Ticket };

interface Member<I, R> {
  item: I;
  settle(outcome: Outcome<R>): void;
}

/** A leader's group while it waits for the repo's turn; it takes no one once the turn comes. */
interface Forming<I, R> {
  members: Member<I, R>[];
  bytes: number;
  open: boolean;
}

/** How large a group may grow: a leader holds its members' bodies in one statement. */
export interface GroupLimits {
  items: number;
  bytes: number;
}

const DEFAULT_LIMITS: GroupLimits = { items: 32, bytes: 1 << 20 };

/**
 * The leader's turn: waits until the repo's previous group has written, closes the group, and
 * answers its items (the leader's first) and `leave`, which lets the next group write. Called
 * inside the leader's transaction, so its BEGIN is sent while the previous group still writes.
 */
export type Turn<I> = () => Promise<{ items: I[]; leave: () => void }>;

/** Writes a group: one result per item, in the order `turn` gave them. */
export type GroupWork<I, R> = (turn: Turn<I>) => Promise<R[]>;

export class CommitGroups {
  /** One group writes at a time per repo (its commits serialize on the repo's rows anyway). */
  readonly gate = new KeyedGate();
  readonly #forming = new Map<string, Forming<unknown, unknown>>();
  readonly #limits: GroupLimits;

  constructor(limits: GroupLimits = DEFAULT_LIMITS) {
    this.#limits = limits;
  }

  /**
   * Commits `item` (of `bytes` body bytes) to `branch` of repo `key`: in the group forming for
   * that branch if it has room, else as the leader of a new group, which runs `work`.
   */
  async run<I, R>(key: number, branch: string, item: I, bytes: number, work: GroupWork<I, R>): Promise<R> {
    const formingKey = `${key}/${branch}`;
    const forming = this.#forming.get(formingKey) as Forming<I, R> | undefined;
    if (!forming || !this.#hasRoom(forming, bytes)) return this.#lead(key, formingKey, item, bytes, work);
    const outcome = await new Promise<Outcome<R>>((settle) => {
      forming.members.push({ item, settle });
      forming.bytes += bytes;
    });
    if (outcome.kind === "done") return outcome.value;
    if (outcome.kind === "failed") throw outcome.error;
    return this.#lead(key, undefined, item, bytes, work, outcome.ticket);
  }

  #hasRoom(forming: Forming<unknown, unknown>, bytes: number): boolean {
    const { items, bytes: most } = this.#limits;
    return forming.open && forming.members.length < items && forming.bytes + bytes <= most;
  }

  /**
   * Leads a group: open to others under `formingKey`, or alone without one; `ticket`, when given,
   * is its first turn's place in the queue.
   */
  async #lead<I, R>(
    key: number,
    formingKey: string | undefined,
    item: I,
    bytes: number,
    work: GroupWork<I, R>,
    ticket?: Ticket,
  ): Promise<R> {
    const forming: Forming<I, R> = { members: [{ item, settle: () => {} }], bytes, open: true };
    const close = () => {
      forming.open = false;
      if (formingKey && this.#forming.get(formingKey) === forming) this.#forming.delete(formingKey);
    };
    if (formingKey) this.#forming.set(formingKey, forming);
    else close();
    const turns: (() => void)[] = [];
    let unused = ticket;
    const turn: Turn<I> = async () => {
      const entering = unused ?? this.gate.enter(key);
      unused = undefined;
      const leave = await entering;
      turns.push(leave);
      close();
      return { items: forming.members.map((m) => m.item), leave };
    };
    const others = () => forming.members.slice(1);
    let results: R[] = [];
    let again: Ticket | undefined;
    try {
      results = await work(turn);
      if (results.length !== forming.members.length)
        throw new Error(`a group of ${forming.members.length} commits answered ${results.length} results`);
    } catch (error) {
      if (others().length === 0 || !(error instanceof DomainError)) {
        for (const m of others()) m.settle({ kind: "failed", error });
        throw error;
      }
      // Each runs again alone, in the group's order: their places in the queue are taken now.
      const tickets = forming.members.map(() => this.gate.enter(key));
      for (const [i, m] of others().entries()) m.settle({ kind: "alone", ticket: tickets[i + 1] as Ticket });
      again = tickets[0];
    } finally {
      close();
      for (const leave of turns) leave();
      if (unused) void unused.then((leave) => leave()); // a turn never taken is handed on
    }
    if (again) return this.#lead(key, undefined, item, bytes, work, again);
    for (const [i, m] of others().entries()) m.settle({ kind: "done", value: results[i + 1] as R });
    return results[0] as R;
  }
}
