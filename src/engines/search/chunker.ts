/** How a document's text is cut into chunks (MindsDB's defaults: 1000 characters, 200 overlap). */
type Chunking = { readonly chunkSize: number; readonly chunkOverlap: number };
const DEFAULT_CHUNKING: Chunking = { chunkSize: 1000, chunkOverlap: 200 };

type Chunk = { readonly content: string; readonly start: number; readonly end: number };

/** Never between the two halves of a character outside the BMP (an emoji): move back before it. */
const whole = (text: string, at: number) => {
  const code = text.charCodeAt(at - 1);
  return at > 0 && at < text.length && code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
};

/** Where a chunk ending near `limit` should end: at a paragraph, sentence or word boundary if one is close. */
const boundary = (text: string, from: number, limit: number) => {
  if (limit >= text.length) return text.length;
  const window = text.slice(from, limit);
  const least = Math.floor((limit - from) * 0.5);
  for (const separator of ['\n\n', '\n', '. ', '? ', '! ', '; ', ', ', ' ']) {
    const at = window.lastIndexOf(separator);
    if (at >= least) return from + at + separator.length;
  }
  return limit;
};

/**
 * Cuts `text` into chunks of at most `chunkSize` characters, each starting `chunkOverlap`
 * characters before the previous one ended (never before its start), preferring to end at a
 * paragraph, sentence or word boundary. Deterministic: a replay cuts the same chunks. Every
 * character of the text is in at least one chunk; an empty text has no chunks.
 */
export const chunkText = (text: string, chunking: Chunking = DEFAULT_CHUNKING): Chunk[] => {
  const size = Math.max(1, Math.floor(chunking.chunkSize));
  const overlap = Math.min(Math.max(0, Math.floor(chunking.chunkOverlap)), size - 1);
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < text.length) {
    let end = whole(text, boundary(text, start, start + size));
    // A chunk of one unit that would split a character keeps the character whole.
    if (end <= start) end = Math.min(text.length, start + 2);
    chunks.push({ content: text.slice(start, end), start, end });
    if (end >= text.length) break;
    const next = whole(text, Math.max(end - overlap, start + 1));
    start = next > start ? next : end;
  }
  return chunks.filter((c) => c.content.trim().length > 0);
};
