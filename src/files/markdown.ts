import fs from 'node:fs';
import type { AppContext } from '../context';
import {
  convertDocument,
  documentKindOf,
  documentMarkdown,
  type DocumentKind,
} from '../engines/documents/convert';
import type { OutboundPolicy } from '../http/outbound';
import { invalid, isDomainError } from '../shared/errors';
import { readDocument } from './documents';
import { readHead } from './load';
import { receiveUrl } from './download';

/**
 * `TO_MARKDOWN('https://…')`: the document at a URL, fetched through the outbound policy (each
 * redirect checked, private addresses refused unless OUTBOUND_ALLOW lists them), held to
 * DOCUMENT_MAX_BYTES while it downloads, and converted as an upload is (no LLM: the text layer).
 */
export const markdownFromUrl = async (
  ctx: AppContext,
  deps: { tempPath: () => string; outbound: Pick<OutboundPolicy, 'get'> },
  url: string,
  signal?: AbortSignal,
): Promise<string> => {
  const temp = deps.tempPath();
  try {
    const { maxBytes } = ctx.config.documents;
    const { originalName } = await receiveUrl(
      url,
      temp,
      maxBytes,
      { received: () => undefined },
      deps.outbound,
      signal,
    ).catch((error: unknown) => {
      if (isDomainError(error) && error.kind === 'PayloadTooLarge')
        throw invalid(
          `The document at ${url} has more than ${maxBytes} bytes (DOCUMENT_MAX_BYTES)`,
          'Document too large',
        );
      throw error;
    });
    const size = (await fs.promises.stat(temp)).size;
    const kind: DocumentKind | null = documentKindOf(originalName, await readHead(temp));
    if (!kind)
      throw invalid(
        `The file at ${url} is not a document TO_MARKDOWN() converts (PDF, DOCX, HTML, Markdown or text, told by its name or first bytes)`,
        'Not a document',
      );
    const sections = await convertDocument(
      await readDocument(ctx, temp, size),
      kind,
      ctx.config.documents,
      signal,
    );
    return documentMarkdown(sections);
  } finally {
    await fs.promises.rm(temp, { force: true });
  }
};
