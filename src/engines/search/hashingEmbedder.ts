import { wordsOf } from './terms';

/**
 * The built-in embedding model: feature hashing of a text's words and word pairs into a fixed
 * number of dimensions (signed, log-weighted, L2-normalised). No weights to download, no provider
 * to call, deterministic, so its vectors are derived data a replay recomputes. Good for
 * keyword-like similarity and for tests; a provider's model understands meaning far better.
 */
export const HASHING_PROVIDER = 'mindledger';
export const HASHING_MODEL = 'hashing';
export const HASHING_DIMENSIONS = 384;

/** FNV-1a over the UTF-16 units, then a murmur-style finaliser: fast, stable, well spread. */
const hash32 = (text: string) => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
};

const slot = (feature: string, dims: number) => {
  const h = hash32(feature);
  return { index: (h >>> 1) % dims, sign: h & 1 ? 1 : -1 };
};

export const hashingEmbed = (texts: readonly string[], dims = HASHING_DIMENSIONS): Float32Array[] =>
  texts.map((text) => {
    const words = wordsOf(text);
    const counts = new Map<string, number>();
    words.forEach((w, i) => {
      counts.set(w, (counts.get(w) ?? 0) + 1);
      if (i > 0) {
        const pair = `${words[i - 1]} ${w}`;
        counts.set(pair, (counts.get(pair) ?? 0) + 0.5);
      }
    });
    const v = new Float32Array(dims);
    for (const [feature, count] of counts) {
      const { index, sign } = slot(feature, dims);
      v[index]! += sign * (1 + Math.log(count));
    }
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < dims; i++) v[i]! /= norm;
    return v;
  });
