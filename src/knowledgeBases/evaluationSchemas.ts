import { z } from 'zod';
import { qualifiedTableName as tableName, wellFormedText } from '../shared/resourceSchemas';
import { MAX_GENERATED_QUESTIONS } from '../../events';

/**
 * `EVALUATE KNOWLEDGE_BASE … USING …` (MindsDB's options, and two of ours: `top_k`, how many
 * documents count as retrieved; `hybrid_search_alpha`, the search's weight of vector against
 * keyword for this evaluation), and the REST body's `evaluation`: one schema for both doors.
 */
export const evaluationOptions = z
  .object({
    test_table: tableName
      .optional()
      .describe(
        'The questions: a table with columns question and doc_id (doc_id) or question and answer (llm_relevancy); with generate_data, the generated set is written there',
      ),
    version: z
      .string()
      .max(100)
      .optional()
      .describe(
        "The evaluator: 'doc_id' (the default: the expected document's rank) or 'llm_relevancy' (a language model scores each chunk retrieved)",
      ),
    generate_data: z
      .union([
        z.boolean(),
        z
          .object({
            from_sql: wellFormedText(10_000)
              .optional()
              .describe('A SELECT answering id and content columns (default: the knowledge base’s chunks)'),
            count: z.number().int().min(1).max(MAX_GENERATED_QUESTIONS).optional(),
          })
          .strict(),
      ])
      .optional()
      .describe('Have a language model write the questions (recorded in the evaluation’s event)'),
    evaluate: z.boolean().optional().describe('false: only generate the questions'),
    llm: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'The model writing questions (generate_data) and judging chunks (llm_relevancy): provider, model_name, api_key, base_url',
      ),
    save_to: tableName
      .optional()
      .describe('A table (db.table: a file or an external database’s) the result row is appended to'),
    top_k: z.number().int().min(1).max(100).optional(),
    hybrid_search_alpha: z.number().min(0).max(1).optional(),
  })
  .strict();

export type EvaluationOptions = z.infer<typeof evaluationOptions>;

export const evaluationBody = z.object({ evaluation: evaluationOptions });

export const evaluationPath = z.object({
  project: z.string().min(1),
  knowledge_base: z.string().min(1),
});

export const evaluationsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const evaluationView = z
  .record(z.string(), z.unknown())
  .describe(
    'An evaluation: its version; doc_id: MindsDB’s total, total_found, retrieved_in_top_10, cumulative_recall, and hit_rate, mrr, recall_at_k; llm_relevancy: MindsDB’s avg_relevancy, avg_relevance_score_by_k, avg_first_relevant_position, mean_mrr, hit_at_k, bin_precision_at_k, avg_entropy, avg_ndcg and the judge; avg_query_time, id, name, created_at, saved_to and the settings it ran with',
  );
