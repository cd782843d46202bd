/** A small seeded PRNG (mulberry32): the same seed gives the same split, trees and artifact bytes. */
export const seededRandom = (seed: number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** Fisher–Yates with the seeded generator, into a typed array (a million rows: no boxed array). */
export const shuffledOrder = (n: number, seed: number): Int32Array => {
  const random = seededRandom(seed);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order;
};

/** Fisher–Yates with the seeded generator: `shuffledOrder` as an array. */
export const shuffledIndices = (n: number, seed: number): number[] => Array.from(shuffledOrder(n, seed));

/** A partial Fisher–Yates shuffle in place: `items[0 .. take)` become a draw without replacement. */
export const drawInPlace = (items: Int32Array, take: number, random: () => number) => {
  for (let i = 0; i < take; i++) {
    const j = i + Math.floor(random() * (items.length - i));
    const t = items[i]!;
    items[i] = items[j]!;
    items[j] = t;
  }
};

/** Up to `max` of `rows`, drawn without replacement by a partial Fisher–Yates shuffle of a copy. */
export const sampleOf = (rows: Int32Array, max: number, random: () => number) => {
  const copy = Int32Array.from(rows);
  const take = Math.min(max, copy.length);
  drawInPlace(copy, take, random);
  return copy.slice(0, take);
};
