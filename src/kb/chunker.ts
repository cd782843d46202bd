/** How a document's text is cut into chunks (MindsDB's defaults: 1000 characters, 200 overlap). */
export type Chunking = { readonly chunkSize: number; readonly chunkOverlap: number };
export const DEFAULT_CHUNKING: Chunking = { chunkSize: 1000, chunkOverlap: 200 };

export type Chunk = { readonly content: string; readonly start: number; readonly end: number };

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
    const end = boundary(text, start, start + size);
    chunks.push({ content: text.slice(start, end), start, end });
    if (end >= text.length) break;
    start = Math.max(end - overlap, start + 1);
  }
  return chunks.filter((c) => c.content.trim().length > 0);
};
