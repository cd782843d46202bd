import { MAX_EVALUATION_QUESTIONS, MAX_GENERATED_QUESTIONS, type KnowledgeBaseEvaluated } from '../../events';
import { settled, type AppContext } from '../context';
import { FACTS } from '../eventlog/commands';
import { cellOf, cellText } from '../shared/rowCells';
import {
  judgePrompt,
  judgeScore,
  parseGeneratedQuestion,
  QUESTION_PROMPT,
  rankOf,
  relevancyMetrics,
  retrievalScores,
  testSetDigest,
} from '../engines/search/evaluation';
import { HASHING_MODEL, HASHING_PROVIDER } from '../engines/search/hashingEmbedder';
import { kbTables } from '../engines/search/layout';
import { summarizeLlmSettings } from '../engines/llm';
import { badGateway, invalid } from '../shared/errors';
import { quoteQualifiedMysqlIdent } from '../shared/quoting';
import { toMindsDbTimestamp } from '../shared/time';
import type { KnowledgeBaseEmbedder, KnowledgeBaseModelPorts } from './embedding';
import {
  cumulativeRecallObject,
  evaluationRowsOf,
  type KnowledgeBaseEvaluationRow,
} from './evaluationProjection';
import type { AskJudge } from './evaluationJudge';
import type { EvaluationOptions } from './evaluationSchemas';
import { naming, saveResultRow, writeGeneratedSet, type CallerWrite } from './evaluationSaving';
import type { LoadKnowledgeBase } from './lookup';
import { contentCounts } from './projection';
import { chatOrBadGateway, llmOfOption } from './retrieval';
import { searchKnowledgeBase, type KbSearchHit } from './search';
import { documentsStream, settingsOf, type KnowledgeBase } from './state';

export type EvaluationPorts = KnowledgeBaseModelPorts & {
  /**
   * The rows a SELECT answers, read as the caller's own SELECT would be (its role's and its
   * token's reach): the test table, and `generate_data`'s `from_sql`.
   */
  readonly callerRows: (database: string, query: string) => Promise<Record<string, unknown>[]>;
  /** A write run as the caller's own statement would be: `save_to`, a generated set's test_table. */
  readonly callerWrite: CallerWrite;
  /** `llm_relevancy`'s judge: each call recorded and counted as any LLM call of a SQL query. */
  readonly judge: AskJudge;
};

/** MindsDB's default number of generated questions. */
const DEFAULT_GENERATED = 20;
const DEFAULT_TOP_K = 10;
/** A model's answers that are not a question: this many are skipped before the generation fails. */
const GENERATION_ERRORS = 5;
const MAX_QUESTION = 2_000;
const MAX_ANSWER = 2_000;

const bounded = (s: string, max: number) => (s.length <= max ? s : s.slice(0, max));

/**
 * MindsDB's evaluators and the test table's column each reads beside `question`: `doc_id` (the
 * document the question was written from) or `answer` (the reference answer; `llm_relevancy`).
 */
const VERSIONS = { doc_id: 'doc_id', llm_relevancy: 'answer' } as const;
type Version = keyof typeof VERSIONS;
const isVersion = (v: string): v is Version => Object.hasOwn(VERSIONS, v);

/** Options → what the evaluation does (refusals name the option). */
const planOf = (options: EvaluationOptions, kb: KnowledgeBase) => {
  const version = options.version ?? 'doc_id';
  if (!isVersion(version))
    throw invalid(
      `version = '${version}' is not offered: 'doc_id' (the expected document's rank among those retrieved) or 'llm_relevancy' (a language model scores each chunk retrieved)`,
      'Invalid evaluation',
    );
  const generate =
    options.generate_data === undefined || options.generate_data === false
      ? null
      : options.generate_data === true
        ? { fromSql: null, count: DEFAULT_GENERATED }
        : {
            fromSql: options.generate_data.from_sql ?? null,
            count: options.generate_data.count ?? DEFAULT_GENERATED,
          };
  if (generate === null && options.test_table === undefined)
    throw invalid(
      'test_table is required (or generate_data, to have the questions written)',
      'Invalid evaluation',
    );
  return {
    version,
    saveTo: options.save_to ?? null,
    generate,
    evaluate: options.evaluate ?? true,
    topK: options.top_k ?? DEFAULT_TOP_K,
    alpha: options.hybrid_search_alpha ?? settingsOf(kb).alpha,
    testTable: options.test_table ?? null,
    llm: options.llm ?? {},
  };
};

/**
 * A test set's case: its question and what it is checked against, `key` (the document's id for
 * doc_id, the reference answer for llm_relevancy).
 */
type TestCase = { readonly question: string; readonly key: string };

/** The test table's rows as cases: columns question and doc_id (llm_relevancy: answer), as MindsDB reads them. */
const casesOf = (table: string, rows: readonly Record<string, unknown>[], version: Version): TestCase[] => {
  const column = VERSIONS[version];
  if (rows.length > MAX_EVALUATION_QUESTIONS)
    throw invalid(
      `${table} holds ${rows.length} questions; an evaluation takes at most ${MAX_EVALUATION_QUESTIONS}`,
      'Invalid evaluation',
    );
  return rows.map((row, i) => {
    const question = cellOf(row, 'question');
    const key = cellOf(row, column);
    if (question === undefined || key === undefined)
      throw invalid(
        `${table} needs the columns question and ${column} (it has ${Object.keys(row).join(', ') || 'none'})`,
        'Invalid evaluation',
      );
    const q = cellText(question).trim();
    if (q === '' || key === null)
      throw invalid(`Row ${i + 1} of ${table} has no question or no ${column}`, 'Invalid evaluation');
    return { question: bounded(q, MAX_QUESTION), key: cellText(key) };
  });
};

/** Every `step`-th item, `count` of them: a sample the same each time (MindsDB samples at random). */
const evenly = <T>(items: readonly T[], count: number) => {
  if (items.length <= count) return [...items];
  const step = items.length / count;
  return Array.from({ length: count }, (_, i) => items[Math.floor(i * step)]!);
};

type EvaluationPlan = ReturnType<typeof planOf>;

/** The chunks (or `from_sql` rows) questions are written from: `{id, content}`. */
const generationSources = async (
  ctx: AppContext,
  ports: EvaluationPorts,
  project: string,
  kb: KnowledgeBase,
  fromSql: string | null,
) => {
  if (fromSql !== null) {
    const rows = await ports.callerRows(project, fromSql);
    if (
      rows.length > 0 &&
      (cellOf(rows[0]!, 'id') === undefined || cellOf(rows[0]!, 'content') === undefined)
    )
      throw invalid('generate_data.from_sql must answer the columns id and content', 'Invalid evaluation');
    return rows.map((r) => ({ id: cellText(cellOf(r, 'id')), content: cellText(cellOf(r, 'content')) }));
  }
  const t = kbTables(kb.id);
  if ((await contentCounts(ctx.duck, kb.id)).chunks === 0) return [];
  const rows = (await ctx.duck.query(
    `SELECT DOC_ID, CONTENT FROM ${t.chunks} ORDER BY POSITION, DOC_ID, CHUNK_INDEX`,
  )) as { DOC_ID: string; CONTENT: string }[];
  return rows.map((r) => ({ id: r.DOC_ID, content: r.CONTENT }));
};

/** The question and reference answer the model writes from one source text, or null when it wrote neither. */
const writeQuestion = async (
  { settings, client }: Awaited<ReturnType<typeof llmOfOption>>,
  content: string,
  signal?: AbortSignal,
) => {
  const reply = await chatOrBadGateway(client, {
    model: settings.model,
    temperature: 0,
    signal,
    messages: [
      { role: 'system', content: QUESTION_PROMPT },
      { role: 'user', content: `Text:\n${bounded(content, 8_000)}` },
    ],
  });
  return parseGeneratedQuestion(reply.message.content ?? '');
};

/** Questions written by a language model, one per sampled chunk (MindsDB's prompt, in our words). */
const generateCases = async (
  ctx: AppContext,
  ports: EvaluationPorts,
  project: string,
  kb: KnowledgeBase,
  plan: EvaluationPlan,
  signal?: AbortSignal,
) => {
  const { fromSql, count } = plan.generate!;
  const writer = await llmOfOption(ports, plan.llm, (message) =>
    invalid(`llm: ${message}`, 'Invalid evaluation'),
  );
  const sampled = evenly(
    (await generationSources(ctx, ports, project, kb, fromSql)).filter((s) => s.content.trim() !== ''),
    Math.min(count, MAX_GENERATED_QUESTIONS),
  );
  if (sampled.length === 0)
    throw invalid(
      'There is nothing to write questions from: the knowledge base holds no chunks',
      'Invalid evaluation',
    );
  const cases: { question: string; docId: string; answer: string }[] = [];
  let errors = 0;
  for (const source of sampled) {
    const parsed = await writeQuestion(writer, source.content, signal);
    if (!parsed) {
      if (++errors > GENERATION_ERRORS)
        throw badGateway(
          `The language model answered ${errors} times without a {"query", "reference_answer"} object`,
          'Language model error',
        );
      continue;
    }
    cases.push({
      question: bounded(parsed.question, MAX_QUESTION),
      docId: source.id,
      answer: bounded(parsed.answer, MAX_ANSWER),
    });
  }
  const summary = summarizeLlmSettings(writer.settings);
  return {
    fromSql,
    llm: { provider: summary.provider, model: summary.model, baseUrl: summary.baseUrl ?? null },
    cases,
  };
};

/**
 * Each question searched as `SELECT … FROM kb WHERE content = question` would: its `limit` closest
 * chunks, and the mean time a search took.
 */
const searchCases = async (
  ctx: AppContext,
  embed: KnowledgeBaseEmbedder['embed'],
  kb: KnowledgeBase,
  dimensions: number,
  questions: readonly string[],
  plan: EvaluationPlan,
  limit: number,
  signal?: AbortSignal,
) => {
  if (questions.length === 0) return { hits: [] as KbSearchHit[][], ms: 0 };
  const embedded = await embed(kb, questions, signal);
  if (embedded.dimensions !== dimensions)
    throw invalid(
      `The embedding model now answers ${embedded.dimensions} dimensions; the knowledge base holds ${dimensions}`,
      'Embedding model changed',
    );
  const started = performance.now();
  const hits: KbSearchHit[][] = [];
  for (const [i, question] of questions.entries()) {
    signal?.throwIfAborted();
    hits.push(
      await searchKnowledgeBase(
        ctx.duck,
        {
          kbId: kb.id,
          dimensions,
          vector: embedded.vectors[i]!,
          query: question,
          alpha: plan.alpha,
          metadataColumns: [],
        },
        limit,
      ),
    );
  }
  return { hits, ms: (performance.now() - started) / questions.length };
};

/** doc_id: each question's document ranked among the distinct documents of the chunks retrieved. */
const rankCases = async (
  search: (limit: number) => ReturnType<typeof searchCases>,
  cases: readonly TestCase[],
  topK: number,
) => {
  // Chunks, not documents: enough for topK distinct documents when each has a few chunks.
  const { hits, ms } = await search(Math.min(1_000, topK * 5));
  const ranks = cases.map((c, i) =>
    rankOf(
      c.key,
      hits[i]!.map((h) => h.id),
      topK,
    ),
  );
  return { scores: retrievalScores(ranks, topK), relevancy: null, ms };
};

/**
 * llm_relevancy (MindsDB's `EvaluateRerank`): each question's top K chunks, each scored by the
 * judge (the `llm` option's model, else the server's default LLM: knowledge bases here take no
 * reranking model), and MindsDB's metrics over the scores.
 */
const judgeCases = async (
  ports: EvaluationPorts,
  search: (limit: number) => ReturnType<typeof searchCases>,
  cases: readonly TestCase[],
  plan: EvaluationPlan,
  project: string,
  signal?: AbortSignal,
) => {
  const { settings } = await llmOfOption(ports, plan.llm, (message) =>
    invalid(`llm: ${message}`, 'Invalid evaluation'),
  );
  const { hits, ms } = await search(plan.topK);
  const prompts = cases.flatMap((c, i) => hits[i]!.map((h) => judgePrompt(c.question, h.content)));
  // Named so in the calls' errors, which the statement's name then prefixes.
  const answers = await ports.judge({ settings, prompts, project, what: "llm_relevancy's judge" }, signal);
  let next = 0;
  const scores = hits.map((chunks) => chunks.map(() => judgeScore(answers[next++] ?? '')));
  const summary = summarizeLlmSettings(settings);
  return {
    scores: null,
    relevancy: {
      judge: { provider: summary.provider, model: summary.model, baseUrl: summary.baseUrl ?? null },
      ...relevancyMetrics(scores),
      scores,
    },
    ms,
  };
};

/** The test table's questions, read as the caller's own SELECT of it would be (a refusal names test_table). */
const testTableCases = async (ports: EvaluationPorts, project: string, testTable: string, version: Version) =>
  casesOf(
    testTable,
    await naming('test_table', testTable, () =>
      ports.callerRows(project, `SELECT * FROM ${quoteQualifiedMysqlIdent(testTable)}`),
    ),
    version,
  );

/** The knowledge base's settings an evaluation is recorded with (its scores depend on them). */
const evaluatedSettings = async (
  ctx: AppContext,
  kb: KnowledgeBase,
  dimensions: number | null,
  plan: EvaluationPlan,
): Promise<KnowledgeBaseEvaluated['data']['settings']> => {
  const counts = await contentCounts(ctx.duck, kb.id);
  const { chunkSize, chunkOverlap } = settingsOf(kb);
  const model = kb.embeddingModel;
  return {
    embedding: {
      provider: String(model.provider ?? HASHING_PROVIDER),
      model: String(model.model_name ?? model.model ?? HASHING_MODEL),
      dimensions,
    },
    chunking: { chunkSize, chunkOverlap },
    alpha: plan.alpha,
    topK: plan.topK,
    documents: counts.documents,
    chunks: counts.chunks,
  };
};

/**
 * `EVALUATE KNOWLEDGE_BASE`: the test set read (or written by a language model), each question
 * searched as a query of the knowledge base would be, the ranks scored, and the whole recorded as
 * one event on the knowledge base's stream.
 */
export const knowledgeBaseEvaluation = (
  ctx: AppContext,
  ports: EvaluationPorts,
  load: LoadKnowledgeBase,
  { embed }: KnowledgeBaseEmbedder,
) => {
  const evaluate = async (
    projectName: string,
    name: string,
    options: EvaluationOptions,
    signal?: AbortSignal,
  ) => {
    const { project, kb } = await load(projectName, name);
    const plan = planOf(options, kb);
    const [row] = (await ctx.duck.query('SELECT DIMENSIONS FROM knowledge_bases WHERE ID = ?', [kb.id])) as {
      DIMENSIONS: number | null;
    }[];
    const dimensions = row?.DIMENSIONS ?? null;
    if (plan.evaluate && dimensions === null)
      throw invalid(`Knowledge base ${kb.name} holds no documents to search yet`, 'Invalid evaluation');
    const generated = plan.generate ? await generateCases(ctx, ports, project.name, kb, plan, signal) : null;
    const cases: TestCase[] = generated
      ? generated.cases.map((c) => ({
          question: c.question,
          key: plan.version === 'doc_id' ? c.docId : c.answer,
        }))
      : await testTableCases(ports, project.name, plan.testTable!, plan.version);
    const search = (limit: number) =>
      searchCases(
        ctx,
        embed,
        kb,
        dimensions!,
        cases.map((c) => c.question),
        plan,
        limit,
        signal,
      );
    const evaluated = !plan.evaluate
      ? null
      : plan.version === 'doc_id'
        ? await rankCases(search, cases, plan.topK)
        : await judgeCases(ports, search, cases, plan, project.name, signal);
    const event: KnowledgeBaseEvaluated = {
      type: 'KnowledgeBaseEvaluated',
      data: {
        kbId: Number(kb.id),
        project: project.name,
        name: kb.name,
        version: plan.version,
        testTable: generated && plan.testTable === null ? null : plan.testTable,
        testSet: {
          digest: testSetDigest(cases.map((c) => [c.question, c.key])),
          questions: cases.length,
          generated,
        },
        settings: await evaluatedSettings(ctx, kb, dimensions, plan),
        scores: evaluated?.scores ?? null,
        ...(plan.version === 'llm_relevancy' ? { relevancy: evaluated?.relevancy ?? null } : {}),
        ...(plan.saveTo !== null && evaluated ? { savedTo: plan.saveTo } : {}),
        avgQueryTimeMs: evaluated?.ms ?? 0,
        evaluatedAt: ctx.clock().toISOString(),
      },
    };
    const presented = (position: bigint) => presentEvaluation(position, event.data);
    // The writes go before the evaluation is recorded, once it has succeeded: a write the caller may
    // not make fails the statement, and nothing is recorded. MindsDB writes a generated set to
    // test_table (replacing it) and evaluates what it reads there: the same questions as these.
    if (generated && plan.testTable !== null)
      await writeGeneratedSet(ports.callerWrite, project.name, plan.testTable, generated.cases);
    if (plan.saveTo !== null && evaluated)
      await saveResultRow(
        ports.callerWrite,
        project.name,
        plan.saveTo,
        // The row's id is MindsDB's (seconds since the epoch): the event's position is not known yet.
        resultRow({ ...presented(0n), id: Math.floor(Date.parse(event.data.evaluatedAt) / 1000) }),
      );
    const outcome = await ctx.commands.run(documentsStream(kb.id), FACTS, () => [event]);
    await settled(ctx, outcome.lastPosition);
    return presented(outcome.lastPosition ?? 0n);
  };

  const list = async (projectName: string, name: string, limit: number) => {
    const { kb } = await load(projectName, name);
    return (await evaluationRowsOf(ctx.duck, kb.id, limit)).map(presentEvaluationRow);
  };

  return { evaluate, list };
};

/** A list of numbers as MindsDB's answer shows it: JSON text. */
const listText = (xs: readonly number[] | undefined) => (xs === undefined ? null : JSON.stringify(xs));

/** An evaluation as its statement answers it: MindsDB's columns first, then ours. */
const presentEvaluation = (id: bigint, d: KnowledgeBaseEvaluated['data']) => ({
  version: d.version,
  avg_relevancy: d.relevancy?.avgRelevancy ?? null,
  avg_relevance_score_by_k: listText(d.relevancy?.avgRelevanceScoreByK),
  avg_first_relevant_position: d.relevancy?.avgFirstRelevantPosition ?? null,
  mean_mrr: d.relevancy?.meanMrr ?? null,
  hit_at_k: listText(d.relevancy?.hitAtK),
  bin_precision_at_k: listText(d.relevancy?.binPrecisionAtK),
  avg_entropy: d.relevancy?.avgEntropy ?? null,
  avg_ndcg: d.relevancy?.avgNdcg ?? null,
  judge_provider: d.relevancy?.judge.provider ?? null,
  judge_model: d.relevancy?.judge.model ?? null,
  saved_to: d.savedTo ?? null,
  total: d.scores?.total ?? null,
  total_found: d.scores?.totalFound ?? null,
  retrieved_in_top_10: d.scores?.retrievedInTop10 ?? null,
  cumulative_recall: d.scores ? JSON.stringify(cumulativeRecallObject(d.scores.cumulativeRecall)) : null,
  avg_query_time: d.avgQueryTimeMs / 1000,
  id: Number(id),
  name: d.name,
  created_at: toMindsDbTimestamp(d.evaluatedAt),
  hit_rate: d.scores?.hitRate ?? null,
  mrr: d.scores?.mrr ?? null,
  recall_at_1: d.scores?.recallAt1 ?? null,
  recall_at_3: d.scores?.recallAt3 ?? null,
  recall_at_5: d.scores?.recallAt5 ?? null,
  recall_at_10: d.scores?.recallAt10 ?? null,
  top_k: d.settings.topK,
  hybrid_search_alpha: d.settings.alpha,
  embedding_provider: d.settings.embedding.provider,
  embedding_model: d.settings.embedding.model,
  dimensions: d.settings.embedding.dimensions,
  chunk_size: d.settings.chunking.chunkSize,
  chunk_overlap: d.settings.chunking.chunkOverlap,
  documents: d.settings.documents,
  chunks: d.settings.chunks,
  questions: d.testSet.questions,
  test_table: d.testTable,
  test_set_digest: d.testSet.digest,
  generated:
    d.testSet.generated?.cases.map((c) => ({ question: c.question, doc_id: c.docId, answer: c.answer })) ??
    null,
});

/** A row of knowledge_base_evaluations, in the same shape (the generated questions are in the log). */
const presentEvaluationRow = (r: KnowledgeBaseEvaluationRow) => ({
  version: r.VERSION,
  avg_relevancy: r.AVG_RELEVANCY,
  avg_relevance_score_by_k: r.AVG_RELEVANCE_SCORE_BY_K,
  avg_first_relevant_position: r.AVG_FIRST_RELEVANT_POSITION,
  mean_mrr: r.MEAN_MRR,
  hit_at_k: r.HIT_AT_K,
  bin_precision_at_k: r.BIN_PRECISION_AT_K,
  avg_entropy: r.AVG_ENTROPY,
  avg_ndcg: r.AVG_NDCG,
  judge_provider: r.JUDGE_PROVIDER,
  judge_model: r.JUDGE_MODEL,
  saved_to: r.SAVED_TO,
  total: r.TOTAL,
  total_found: r.TOTAL_FOUND,
  retrieved_in_top_10: r.RETRIEVED_IN_TOP_10,
  cumulative_recall: r.CUMULATIVE_RECALL,
  avg_query_time: r.AVG_QUERY_TIME,
  id: Number(r.ID),
  name: r.NAME,
  created_at: toMindsDbTimestamp(r.CREATED_AT),
  hit_rate: r.HIT_RATE,
  mrr: r.MRR,
  recall_at_1: r.RECALL_AT_1,
  recall_at_3: r.RECALL_AT_3,
  recall_at_5: r.RECALL_AT_5,
  recall_at_10: r.RECALL_AT_10,
  top_k: r.TOP_K,
  hybrid_search_alpha: r.HYBRID_SEARCH_ALPHA,
  embedding_provider: r.EMBEDDING_PROVIDER,
  embedding_model: r.EMBEDDING_MODEL,
  dimensions: r.DIMENSIONS,
  chunk_size: r.CHUNK_SIZE,
  chunk_overlap: r.CHUNK_OVERLAP,
  documents: r.DOCUMENTS,
  chunks: r.CHUNKS,
  questions: r.QUESTIONS,
  test_table: r.TEST_TABLE,
  test_set_digest: r.TEST_SET_DIGEST,
  generated: r.GENERATED,
});

/** What every evaluation answers after its metrics: when and how long, then its identity. */
const TIMING_AND_IDENTITY = [
  ['avg_query_time', 'DOUBLE'],
  ['id', 'BIGINT'],
  ['name', 'VARCHAR'],
  ['created_at', 'VARCHAR'],
] as const;

/** …and last: the knowledge base as it was searched, and the test set. */
const SEARCHED = [
  ['embedding_provider', 'VARCHAR'],
  ['embedding_model', 'VARCHAR'],
  ['chunk_size', 'BIGINT'],
  ['chunk_overlap', 'BIGINT'],
  ['documents', 'BIGINT'],
  ['chunks', 'BIGINT'],
  ['questions', 'BIGINT'],
  ['test_set_digest', 'VARCHAR'],
] as const;

/** The columns EVALUATE KNOWLEDGE_BASE answers for `doc_id`: MindsDB's first, then ours. */
const DOC_ID_COLUMNS = [
  ['total', 'BIGINT'],
  ['total_found', 'BIGINT'],
  ['retrieved_in_top_10', 'BIGINT'],
  ['cumulative_recall', 'VARCHAR'],
  ...TIMING_AND_IDENTITY,
  ['hit_rate', 'DOUBLE'],
  ['mrr', 'DOUBLE'],
  ['recall_at_1', 'DOUBLE'],
  ['recall_at_3', 'DOUBLE'],
  ['recall_at_5', 'DOUBLE'],
  ['recall_at_10', 'DOUBLE'],
  ['top_k', 'BIGINT'],
  ['hybrid_search_alpha', 'DOUBLE'],
  ...SEARCHED,
] as const;

/** …and for `llm_relevancy`: MindsDB's (the lists as JSON text), then ours. */
const RELEVANCY_COLUMNS = [
  ['avg_relevancy', 'DOUBLE'],
  ['avg_relevance_score_by_k', 'VARCHAR'],
  ['avg_first_relevant_position', 'DOUBLE'],
  ['mean_mrr', 'DOUBLE'],
  ['hit_at_k', 'VARCHAR'],
  ['bin_precision_at_k', 'VARCHAR'],
  ['avg_entropy', 'DOUBLE'],
  ['avg_ndcg', 'DOUBLE'],
  ...TIMING_AND_IDENTITY,
  ['top_k', 'BIGINT'],
  ['hybrid_search_alpha', 'DOUBLE'],
  ['judge_provider', 'VARCHAR'],
  ['judge_model', 'VARCHAR'],
  ...SEARCHED,
] as const;

type PresentedEvaluation = ReturnType<typeof presentEvaluation>;

/** The columns (name, type) an evaluation of `version` answers. */
export const evaluationColumnsOf = (
  version: PresentedEvaluation['version'],
): readonly (readonly [keyof PresentedEvaluation, string])[] =>
  version === 'llm_relevancy' ? RELEVANCY_COLUMNS : DOC_ID_COLUMNS;

/** The evaluation's answer row, by its version's columns (what save_to writes). */
const resultRow = (presented: PresentedEvaluation) =>
  Object.fromEntries(evaluationColumnsOf(presented.version).map(([n]) => [n, presented[n]]));
