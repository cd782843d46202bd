import { z } from 'zod';
import { defineTool, toJsonText, type AgentTool } from './tools';

/** The knowledge bases a knowledge_base/retrieval skill (or an agent's `data.knowledge_bases`) may search. */
export type KbScope = {
  readonly source: string;
  /** KB names as the port resolves them (`kb` or `project.kb`). */
  readonly knowledgeBases: readonly string[];
  readonly description?: string;
};

export type KbHit = {
  readonly content: string;
  readonly id?: string | number;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Higher is closer (e.g. 1 − cosine distance), when the KB can say. */
  readonly relevance?: number;
};

/** Implemented by the knowledge-base engine: the `limit` chunks closest to `query`. */
export interface KnowledgeBaseSearchPort {
  search(
    knowledgeBase: string,
    query: string,
    options: { limit: number; signal: AbortSignal },
  ): Promise<readonly KbHit[]>;
}

export const KB_TOOL_BASE_NAME = 'kb_query_tool';

/** One `kb_query_tool` over a scope; with several KBs, the model names the one to search. */
export const kbTool = (
  scope: KbScope,
  port: KnowledgeBaseSearchPort,
  name = KB_TOOL_BASE_NAME,
  options: { defaultLimit?: number; maxLimit?: number } = {},
): AgentTool => {
  const defaultLimit = options.defaultLimit ?? 5;
  const maxLimit = options.maxLimit ?? 20;
  const [firstKb, ...otherKbs] = scope.knowledgeBases;
  if (!firstKb) throw new Error(`kb scope ${scope.source} names no knowledge base`);
  const kbNames: [string, ...string[]] = [firstKb, ...otherKbs];
  const about = scope.description ? ` About them: ${scope.description}.` : '';
  const schema = z.object({
    query: z.string().min(1).describe("What to look for: usually the user's question, in full"),
    ...(kbNames.length > 1
      ? { knowledge_base: z.enum(kbNames).describe('The knowledge base to search') }
      : {}),
    limit: z
      .number()
      .int()
      .min(1)
      .max(maxLimit)
      .optional()
      .describe(`How many passages (default ${defaultLimit})`),
  });
  return defineTool({
    name,
    kind: 'kb_query',
    description: `Search the knowledge base${kbNames.length > 1 ? 's' : ''} ${kbNames.join(', ')} for passages relevant to a question, and get them with their metadata. You must use this tool to get context before answering questions about this content.${about}`,
    schema,
    run: async (args, { signal, maxResultChars }) => {
      const kb =
        'knowledge_base' in args && typeof args.knowledge_base === 'string' ? args.knowledge_base : firstKb;
      const hits = await port.search(kb, args.query, { limit: args.limit ?? defaultLimit, signal });
      const context = hits.map((h) => ({ knowledge_base: kb, ...h }));
      const shown: unknown[] = [];
      let size = 2;
      for (const hit of context) {
        const cost = toJsonText(hit).length + 1;
        if (size + cost > maxResultChars && shown.length > 0) break;
        shown.push(hit);
        size += cost;
      }
      return {
        content: hits.length ? toJsonText(shown) : 'No relevant passages were found.',
        rows: hits.length,
        context,
      };
    },
  });
};
