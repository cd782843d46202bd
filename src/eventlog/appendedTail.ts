/**
 * The latest events this process appended, for a log it alone writes (SQLite): the read model's
 * reader asks for exactly these right after each append, and answering from memory spares the
 * query (the read still takes its turn in the log's queue: see readAll in sqlite.ts).
 *
 * It answers only when it holds everything after the reader's position: `floor` is the highest
 * position stored before the oldest event held, so a reader at or past it misses nothing. It holds
 * the rows as stored (texts, not parsed events), so each reader parses its own copy, as a query's
 * reader does, and a batch read from here is the batch a query would have read.
 */
export class AppendedTail<Row extends { readonly position: bigint }> {
  private events: Row[] = [];

  constructor(
    /** Every stored position at or below this one is older than the events held. */
    private floor: bigint,
    private readonly capacity = 4096,
  ) {}

  /** Events just committed, in position order, all after those held. */
  add(committed: readonly Row[]) {
    this.events.push(...committed);
    const excess = this.events.length - this.capacity;
    if (excess > 0) {
      this.floor = this.events[excess - 1]!.position;
      this.events = this.events.slice(excess);
    }
  }

  /** Up to `limit` events after `position`, or undefined when some of them may not be held. */
  after(position: bigint, limit: number): Row[] | undefined {
    if (position < this.floor) return undefined;
    // Positions increase along the array: the first one past `position`, by bisection.
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.events[mid]!.position <= position) lo = mid + 1;
      else hi = mid;
    }
    return this.events.slice(lo, lo + limit);
  }
}
