import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { invalid } from '../../shared/errors';
import type { DocumentLimits } from './types';

/**
 * The parsers run in a worker thread of their own, one per conversion: a hostile file can make
 * them spin or grow (pdf.js reading a damaged cross-reference table, a deep HTML tree), and only a
 * thread can be stopped whatever it is doing (`terminate` at DOCUMENT_TIMEOUT_MS) and held to a
 * heap of its own (DOCUMENT_MAX_MEMORY_MB) without taking the service down with it.
 *
 * The thread's code is plain CommonJS, given as text: it runs outside the TypeScript build (and
 * outside jest's module system, which cannot load pdf.js's ES modules), and requires the parsers
 * by the paths this process resolved, so both load the same installed versions.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { kind, bytes, limits, modules } = workerData;
const refuse = (limit, found) => parentPort.postMessage({ type: 'refused', limit, found });
const deeperThan = (root, max) => {
  const stack = [[root, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop();
    if (depth > max) return true;
    for (const child of node.childNodes || []) stack.push([child, depth + 1]);
  }
  return false;
};
const markdownOf = (html) => {
  if (deeperThan(require(modules.htmlParser).parse(html), limits.maxDepth)) return null;
  return require(modules.htmlMarkdown).NodeHtmlMarkdown.translate(html);
};
const run = async () => {
  if (kind === 'pdf') {
    const { getDocumentProxy, extractText } = require(modules.pdf);
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
    if (pdf.numPages > limits.maxPages) return refuse('pages', pdf.numPages);
    const { text } = await extractText(pdf, { mergePages: false });
    return parentPort.postMessage({ type: 'pages', pages: text });
  }
  const html = kind === 'docx'
    ? (await require(modules.docx).convertToHtml({ buffer: Buffer.from(bytes) })).value
    : Buffer.from(bytes).toString('utf8');
  const markdown = markdownOf(html);
  if (markdown === null) return refuse('depth', null);
  parentPort.postMessage({ type: 'markdown', markdown });
};
run().catch((error) => parentPort.postMessage({ type: 'failed', reason: String((error && error.message) || error) }));
`;

const answer = z.discriminatedUnion('type', [
  z.object({ type: z.literal('pages'), pages: z.array(z.string()) }),
  z.object({ type: z.literal('markdown'), markdown: z.string() }),
  z.object({ type: z.literal('refused'), limit: z.enum(['pages', 'depth']), found: z.number().nullable() }),
  z.object({ type: z.literal('failed'), reason: z.string() }),
]);
type Extracted = { type: 'pages'; pages: string[] } | { type: 'markdown'; markdown: string };

/** What the worker reads with: resolved here, once. */
let modules: Record<string, string> | undefined;
const parserPaths = () =>
  (modules ??= {
    pdf: require.resolve('unpdf'),
    docx: require.resolve('mammoth'),
    htmlParser: require.resolve('node-html-parser'),
    htmlMarkdown: require.resolve('node-html-markdown'),
  });

const tooLarge = (detail: string) => invalid(detail, 'Document too large');

const refusal = (kind: string, limits: DocumentLimits, limit: 'pages' | 'depth', found: number | null) =>
  limit === 'pages'
    ? tooLarge(`The PDF has ${found} pages; at most ${limits.maxPages} are accepted (DOCUMENT_MAX_PAGES)`)
    : tooLarge(
        `The ${kind.toUpperCase()}'s elements are nested more than ${limits.maxDepth} deep (DOCUMENT_MAX_DEPTH)`,
      );

/** Extracts a PDF's pages' text, or a DOCX's or an HTML's markdown, in a bounded worker thread. */
export const extractInWorker = (
  kind: 'pdf' | 'docx' | 'html',
  bytes: Uint8Array,
  limits: DocumentLimits,
  signal?: AbortSignal,
): Promise<Extracted> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { kind, bytes, limits, modules: parserPaths() },
      resourceLimits: { maxOldGenerationSizeMb: limits.maxMemoryMb, stackSizeMb: 4 },
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', stopped);
      void worker.terminate();
      outcome();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(
            tooLarge(
              `Converting the ${kind.toUpperCase()} took longer than ${limits.timeoutMs} ms (DOCUMENT_TIMEOUT_MS); it was stopped`,
            ),
          ),
        ),
      limits.timeoutMs,
    );
    worker.on('message', (message: unknown) => {
      const parsed = answer.safeParse(message);
      settle(() => {
        if (!parsed.success) reject(new Error('The document worker answered in an unknown shape'));
        else if (parsed.data.type === 'refused')
          reject(refusal(kind, limits, parsed.data.limit, parsed.data.found));
        else if (parsed.data.type === 'failed')
          reject(invalid(`The file cannot be read as ${kind}: ${parsed.data.reason}`, 'Unreadable file'));
        else resolve(parsed.data);
      });
    });
    worker.on('error', (error: Error & { code?: string }) =>
      settle(() =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? tooLarge(
                `Converting the ${kind.toUpperCase()} needs more than ${limits.maxMemoryMb} MiB (DOCUMENT_MAX_MEMORY_MB); it was stopped`,
              )
            : invalid(`The file cannot be read as ${kind}: ${error.message}`, 'Unreadable file'),
        ),
      ),
    );
    // The caller gone (a SQL query interrupted, TO_MARKDOWN's client left): the thread stops too.
    const stopped = () => settle(() => reject(new Error('The document conversion was stopped')));
    if (signal?.aborted) stopped();
    else signal?.addEventListener('abort', stopped, { once: true });
    worker.on('exit', () => settle(() => reject(new Error('The document worker ended without an answer'))));
  });
