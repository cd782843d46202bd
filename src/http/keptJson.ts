/**
 * A list read from a read cache (`ctx.cached`) is one object for as long as its tables stay at one
 * version, and hot GETs answer it over and over: a project's skills, a thousand of them, cost 2.6 ms
 * a request to present, make JSON-safe, serialise and turn into bytes again, for the same bytes. A
 * route presents such a list with `presentedOnce`: the same list presented the same way is the same
 * body, once for each list, and the API (`KeptJson`) keeps the bytes it sent for that body and sends
 * them again.
 *
 * What makes this safe: the list is shared already (every reader of its version gets the same
 * object), so nothing may change it, and the body `presentedOnce` makes of it is frozen. A new
 * version of the tables is a new list, hence a new body: nothing kept outlives a write.
 */

/** Bodies made by `presentedOnce`: the only ones whose bytes are kept. */
const unchanging = new WeakSet<object>();

/** The bodies made of each list, by presenter (a list may be presented two ways). */
const presented = new WeakMap<object, WeakMap<object, readonly unknown[]>>();

/**
 * `items.map(present)`, made once for this list and this presenter (give a function made once, not
 * one made per request, or each request makes it again). Neither `items` nor what it holds may change
 * afterwards: give only a value shared by a read cache (or one made for this request alone).
 */
export const presentedOnce = <S, B>(items: readonly S[], present: (item: S) => B): readonly B[] => {
  let byList = presented.get(present);
  if (!byList) presented.set(present, (byList = new WeakMap()));
  const made = byList.get(items);
  if (made) return made as readonly B[];
  const body = Object.freeze(items.map((item) => present(item)));
  byList.set(items, body);
  unchanging.add(body);
  return body;
};

/** The bytes of the JSON of the bodies `presentedOnce` made, made on each one's first answer. */
export class KeptJson {
  private readonly sent = new WeakMap<object, Buffer>();

  /**
   * The bytes of `body`'s JSON (`serialize` makes its text, once), or undefined for a body whose
   * bytes are not kept (any body `presentedOnce` did not make).
   */
  bytesOf(body: unknown, serialize: () => string): Buffer | undefined {
    if (typeof body !== 'object' || body === null || !unchanging.has(body)) return undefined;
    let bytes = this.sent.get(body);
    if (!bytes) this.sent.set(body, (bytes = Buffer.from(serialize(), 'utf8')));
    return bytes;
  }
}
