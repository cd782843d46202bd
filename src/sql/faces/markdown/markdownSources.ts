import type { AppContext } from '../../../context';
import { FILES_SCHEMA, nameKey } from '../../../shared/names';
import { quoteIdent } from '../../../shared/quoting';
import type { SqlPorts } from '../../ports';
import type { MarkdownSources } from './toMarkdown';

/**
 * `TO_MARKDOWN()`'s documents through the files capability: a file looked up (and then read on the
 * query's own connection), a URL fetched and converted. Both outside the reader the query holds.
 */
export const markdownSources = (ctx: AppContext, files: SqlPorts['files']): MarkdownSources => ({
  file: async (name) => {
    const file = await ctx.duck.detached(() => files.find(name));
    return file && { format: file.format, table: `${FILES_SCHEMA}.${quoteIdent(nameKey(name))}` };
  },
  url: (url, signal) => ctx.duck.detached(() => files.markdownFromUrl(url, signal)),
});
