/**
 * The room a wire door (MySQL, PostgreSQL) gives connections that have not signed in yet: at most
 * `max` at once, and at most `perAddress` from one client address. They do not count against the
 * room of signed-in connections (the doors' maxConnections).
 *
 * A newcomer is always let in: past its address's share, that address's oldest waiting connection
 * is dropped; with the room full, the oldest one of the address holding the most. Refusing the
 * newcomer instead would let a flood that keeps the room full (re-opening sockets as they expire)
 * lock everyone out; dropping the oldest lets a real client in, and it stays unless the flood opens
 * a share's worth of sockets while that client signs in (milliseconds) — and the flooding address
 * pays first.
 */
type PreAuthLimits = { max: number; perAddress: number };

type PreAuthTicket = {
  /** Signed in (or gone): no longer in the room. Idempotent. */
  leave(): void;
};

type Waiting = { address: string; drop: () => void };

export class PreAuthGate {
  /** In arrival order: the first of an address is its oldest. */
  private readonly waiting = new Map<number, Waiting>();
  private readonly byAddress = new Map<string, number>();
  private next = 1;

  constructor(private readonly limits: PreAuthLimits) {}

  /** Lets a connection from `address` in, dropping another (its `drop` called) if the room says so. */
  admit(address: string, drop: () => void): PreAuthTicket {
    if ((this.byAddress.get(address) ?? 0) >= this.limits.perAddress) this.dropOldest(address);
    else if (this.waiting.size >= this.limits.max) this.dropOldest(this.busiest());
    const id = this.next++;
    this.waiting.set(id, { address, drop });
    this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    return { leave: () => this.remove(id) };
  }

  private remove(id: number): Waiting | undefined {
    const w = this.waiting.get(id);
    if (!w) return undefined;
    this.waiting.delete(id);
    const left = (this.byAddress.get(w.address) ?? 1) - 1;
    if (left > 0) this.byAddress.set(w.address, left);
    else this.byAddress.delete(w.address);
    return w;
  }

  private dropOldest(address: string | undefined) {
    for (const [id, w] of this.waiting)
      if (w.address === address) {
        this.remove(id);
        w.drop();
        return;
      }
  }

  /** The address holding the most of the room. */
  private busiest(): string | undefined {
    let most: string | undefined;
    let count = 0;
    for (const [address, n] of this.byAddress)
      if (n > count) {
        most = address;
        count = n;
      }
    return most;
  }
}
