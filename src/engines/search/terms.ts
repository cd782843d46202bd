/**
 * The words of a text for keyword (BM25) search and the hashing embedder: lower-cased runs of
 * letters and digits (any script), common English words left out, light plural/suffix folding so
 * `orders` finds `order`. Deterministic (the terms table is rebuilt on replay).
 */
const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have how i in is it its of on or that the this to was were what when where which who why will with you your'.split(
    ' ',
  ),
);

const fold = (word: string) => {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('es') && /(sh|ch|x|s|z)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
};

export const wordsOf = (text: string): string[] =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w)).map(fold);

/** Term frequencies of a text. */
export const termsOf = (text: string): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const w of wordsOf(text)) counts.set(w, (counts.get(w) ?? 0) + 1);
  return counts;
};
