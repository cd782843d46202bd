// The scale benchmark's corpus: synthetic documents with a realistic term distribution, the same
// every run (seeded), so insert and search figures compare across runs.
import { chunkText } from '../src/engines/search/chunker';
import type { KbDocument } from '../src/knowledgeBases/pendingChunks';
import { seededRandom } from '../src/engines/ml/random';

/** The service's default chunking (MindsDB's): the corpus is sized in these chunks. */
export const CHUNKING = { chunkSize: 1000, chunkOverlap: 200 };

/**
 * A vocabulary with a realistic term distribution: English function and common words at the top
 * ranks, then made-up words; drawn by Zipf's law (s = 1), each document also repeating a few words
 * of its own (burstiness, as real documents repeat their subject's words).
 */
const COMMON =
  'the of and to a in is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will more can who out what up about into than them only some could other time new these two may first then do any like my now over such our man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three'.split(
    ' ',
  );
const SYLLABLES =
  'ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga ge go gu ha he hi ho ka ke ki ko la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo wa we wi za ze zo bra cre dri fla glo pla pre pro sta ste sto tra tre tri qua lin mar ter son dor ven'.split(
    ' ',
  );

const vocabulary = (size: number, random: () => number) => {
  const words = [...COMMON];
  const seen = new Set(words);
  while (words.length < size) {
    const n = 2 + Math.floor(random() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    if (random() < 0.08) w += ['ing', 'ed', 's', 'er', 'ion'][Math.floor(random() * 5)];
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
};

/** Draws ranks 0..n-1 with probability ∝ 1 / (rank + 1). */
const zipf = (n: number, random: () => number) => {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) cumulative[i] = total += 1 / (i + 1);
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
};

const TOPICS = ['billing', 'security', 'shipping', 'api', 'hr', 'it', 'product', 'privacy'];

/** Synthetic documents of 2,000–3,600 characters until they cut into `targetChunks` chunks. */
export const syntheticCorpus = (targetChunks: number, seed = 20240611) => {
  const random = seededRandom(seed);
  const words = vocabulary(30_000, random);
  const draw = zipf(words.length, random);
  const documents: (KbDocument & { topic: string; chunks: number })[] = [];
  let chunks = 0;
  while (chunks < targetChunks) {
    const own = Array.from({ length: 8 }, () => words[200 + Math.floor(random() * 5_000)]!);
    const length = 2_000 + Math.floor(random() * 1_600);
    let text = '';
    let sentences = 0;
    while (text.length < length) {
      const n = 5 + Math.floor(random() * 16);
      const sentence: string[] = [];
      for (let i = 0; i < n; i++)
        sentence.push(random() < 0.12 ? own[Math.floor(random() * own.length)]! : words[draw()]!);
      const first = sentence[0]!;
      sentence[0] = first.charAt(0).toUpperCase() + first.slice(1);
      sentences++;
      text += sentence.join(' ') + (sentences % 5 === 0 ? '.\n\n' : '. ');
    }
    const content = text.trim();
    const topic = TOPICS[Math.floor(random() * TOPICS.length)]!;
    const pieces = chunkText(content, CHUNKING).length;
    documents.push({ id: `doc${documents.length}`, content, topic, metadata: { topic }, chunks: pieces });
    chunks += pieces;
  }
  /** Questions of 3–7 words, at least two of them past the 150 most common words; no two alike. */
  const questions = (count: number) => {
    const asked = new Set<string>();
    while (asked.size < count) {
      const picked: number[] = [];
      const length = 3 + Math.floor(random() * 5);
      while (picked.length < length || picked.filter((r) => r >= 150).length < 2) {
        picked.push(draw());
        if (picked.length > length) picked.shift();
      }
      asked.add(picked.map((r) => words[r]!).join(' '));
    }
    return [...asked];
  };
  return { documents, chunks, questions };
};
