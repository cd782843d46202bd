import { AGENT_EVALUATION_EXCERPT, MAX_AGENT_EVALUATION_CASES, type AgentEvaluated } from '../../events';
import { mapConcurrently } from '../shared/concurrency';
import { settled, type AppContext } from '../context';
import { FACTS } from '../eventlog/commands';
import { cellOf, cellText } from '../shared/rowCells';
import { storableForm, storableText } from '../shared/jsonBounds';
import { canonicalSkillKind } from '../engines/agentLoop';
import type { LlmPrompt } from '../engines/llm/llmModelSpec';
import { judgeScore, testSetDigest } from '../engines/search/evaluation';
import { loadProject } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid, isDomainError, notFound } from '../shared/errors';
import { quoteQualifiedMysqlIdent } from '../shared/quoting';
import { toMindsDbTimestamp } from '../shared/time';
import { skillById } from '../skills/state';
import {
  agentEvaluationCaseRows,
  agentEvaluationRow,
  agentEvaluationRowsOf,
  type AgentEvaluationCaseRow,
  type AgentEvaluationRow,
} from './evaluationProjection';
import type { AgentEvaluationOptions } from './evaluationSchemas';
import { agentJudgePrompt, JUDGE_PASS, sameRows, textScore } from './evaluationScoring';
import { requireAgent, type Agent } from './state';

type Rows = Record<string, unknown>[];

/** One question's run: its answer and SQL, or why it failed (its trace id when the run was recorded). */
export type AskedRun = {
  readonly traceId: string | null;
  readonly answer: string;
  readonly sql: readonly string[];
  readonly error: string | null;
};

/** What an evaluation needs beyond the log, filled by the composition root. */
export type AgentEvaluationPorts = {
  /**
   * The agent asked one question as any door asks it: a run recorded on `agent-run-<traceId>`. A run
   * that fails is the case's failure (its error kept), not the evaluation's; a cancelled one throws.
   */
  readonly ask: (project: string, agent: string, question: string, signal?: AbortSignal) => Promise<AskedRun>;
  /** The rows a SELECT answers, read as the caller's own SELECT would be (the test set, the SQL compared). */
  readonly callerRows: (database: string, query: string) => Promise<Rows>;
  /**
   * `llm_judge`: the judge `llm` names (resolved before any question is asked: a bad setting is
   * refused first), summarised, and how to ask it: through the LLM calls' path, each call recorded
   * and priced.
   */
  readonly judge: (llm: Record<string, unknown>) => Promise<{
    readonly summary: { provider: string; model: string; baseUrl: string | null };
    readonly ask: (
      request: { prompts: readonly LlmPrompt[]; project: string; what: string },
      signal?: AbortSignal,
    ) => Promise<string[]>;
  }>;
};

/** The test set: a table (`db.table` or a table of the current database) or a SELECT. */
type EvaluationSource = { readonly table: string } | { readonly query: string };

const agentEvaluationsStream = (agentId: bigint | number) => `agent-evaluations-${agentId}`;

/**
 * What the event keeps of a text: its start, made storable (a NUL or a half surrogate pair in an
 * answer or an error is shown as U+FFFD: the run holds the text as the model wrote it).
 */
const excerpt = (s: string) => storableForm(s.slice(0, AGENT_EVALUATION_EXCERPT));

type TestCase = { readonly question: string; readonly expected: string };

/** The test set's rows as cases: `question` and `expected_sql` (sql_result) or `expected_answer`. */
const casesOf = (source: string, rows: Rows, column: 'expected_answer' | 'expected_sql'): TestCase[] => {
  if (rows.length === 0) throw invalid(`${source} holds no cases`, 'Invalid evaluation');
  if (rows.length > MAX_AGENT_EVALUATION_CASES)
    throw invalid(
      `${source} holds ${rows.length} cases; an evaluation takes at most ${MAX_AGENT_EVALUATION_CASES}`,
      'Invalid evaluation',
    );
  return rows.map((row, i) => {
    const question = cellOf(row, 'question');
    const expected = cellOf(row, column);
    if (question === undefined || expected === undefined)
      throw invalid(
        `${source} needs the columns question and ${column} (it has ${Object.keys(row).join(', ') || 'none'})`,
        'Invalid evaluation',
      );
    const q = cellText(question).trim();
    if (q === '' || expected === null)
      throw invalid(`Row ${i + 1} of ${source} has no question or no ${column}`, 'Invalid evaluation');
    if (!storableText(q) || !storableText(cellText(expected)))
      throw invalid(
        `Row ${i + 1} of ${source}: its question or ${column} holds a NUL character or a lone surrogate`,
        'Invalid evaluation',
      );
    return { question: q, expected: cellText(expected) };
  });
};

/** The database the agent's SQL reads unqualified names in: its first SQL skill's, else the project. */
const sqlDatabaseOf = (agent: Agent, state: Awaited<ReturnType<typeof loadProject>>, project: string) => {
  for (const link of agent.skills) {
    const skill = skillById(state.skills, link.skillId);
    if (skill && canonicalSkillKind(skill.type) === 'sql' && typeof skill.params.database === 'string')
      return skill.params.database || project;
  }
  return project;
};

/**
 * `EVALUATE AGENT`: each case's question asked of the agent (AGENT_SQL_CONCURRENCY at a time, as a
 * JOIN with an agent asks: each a run of the agent's, as a door's would be), each answer scored,
 * the whole recorded as one event on the agent's evaluations stream.
 */
export const agentEvaluation = (ctx: AppContext, projects: ProjectDirectory, ports: AgentEvaluationPorts) => {
  /** sql_result: the rows of the agent's last SQL (run again now, as the caller's SELECT) against the expected rows. */
  const sqlResultScores = async (database: string, asked: readonly AskedRun[], expected: readonly Rows[]) => {
    const out: { score: number; error: string | null }[] = [];
    for (const [i, a] of asked.entries()) {
      const last = a.sql.at(-1);
      if (a.error !== null) out.push({ score: 0, error: a.error });
      else if (last === undefined) out.push({ score: 0, error: 'The agent ran no SQL' });
      else
        out.push(
          await ports.callerRows(database, last).then(
            (rows) => ({ score: sameRows(rows, expected[i]!) ? 1 : 0, error: null }),
            (error: unknown) => {
              if (!isDomainError(error)) throw error;
              return { score: 0, error: `The agent's SQL failed: ${error.detail}` };
            },
          ),
        );
    }
    return out;
  };

  const evaluate = async (
    projectName: string,
    agentRef: string,
    source: EvaluationSource,
    database: string,
    options: AgentEvaluationOptions,
    signal?: AbortSignal,
  ) => {
    const project = await projects.require(projectName);
    const state = await loadProject(ctx, projects, project.name);
    const agent = requireAgent(state.agents, agentRef);
    const scoring = options.scoring ?? 'exact';
    // As the event names it (bounded: the source is kept for the reader, not to run again).
    const written = 'table' in source ? source.table : `(${source.query})`;
    const named = written.length <= 1_000 ? written : `${written.slice(0, 1_000)}…`;
    const query =
      'table' in source ? `SELECT * FROM ${quoteQualifiedMysqlIdent(source.table)}` : source.query;
    const cases = casesOf(
      named,
      await ports.callerRows(database, query),
      scoring === 'sql_result' ? 'expected_sql' : 'expected_answer',
    );
    // The expected rows are read before the agent is asked: a test set whose SQL fails is refused
    // before any run is made.
    const expectedRows: Rows[] = [];
    if (scoring === 'sql_result')
      for (const [i, c] of cases.entries())
        expectedRows.push(
          await ports.callerRows(project.name, c.expected).catch((error: unknown) => {
            if (!isDomainError(error)) throw error;
            throw invalid(`Row ${i + 1}'s expected_sql: ${error.detail}`, 'Invalid evaluation');
          }),
        );
    const judging = scoring === 'llm_judge' ? await ports.judge(options.llm ?? {}) : null;
    const started = performance.now();
    const asked = await mapConcurrently(cases, ctx.config.agentSqlConcurrency, (c) =>
      ports.ask(project.name, agent.name, c.question, signal),
    );
    let scored: { score: number; error: string | null }[];
    if (scoring === 'sql_result')
      scored = await sqlResultScores(sqlDatabaseOf(agent, state, project.name), asked, expectedRows);
    else if (scoring === 'llm_judge') {
      const answered = cases.flatMap((_, i) => (asked[i]!.error === null ? [i] : []));
      const replies = await judging!.ask(
        {
          prompts: answered.map((i) =>
            agentJudgePrompt(options.rubric!, { ...cases[i]!, answer: asked[i]!.answer }),
          ),
          project: project.name,
          what: "EVALUATE AGENT's judge",
        },
        signal,
      );
      const byCase = new Map(answered.map((i, n) => [i, judgeScore(replies[n] ?? '')]));
      scored = asked.map((a, i) => ({ score: byCase.get(i) ?? 0, error: a.error }));
    } else
      scored = asked.map((a, i) => ({
        error: a.error,
        score:
          a.error !== null ? 0 : textScore(scoring, a.answer, cases[i]!.expected, options.tolerance ?? 0),
      }));
    const passMark = scoring === 'llm_judge' ? JUDGE_PASS : 1;
    const recorded = cases.map((c, i) => ({
      question: excerpt(c.question),
      expected: excerpt(c.expected),
      answer: excerpt(asked[i]!.answer),
      score: scored[i]!.score,
      passed: scored[i]!.score >= passMark,
      traceId: asked[i]!.traceId,
      error: scored[i]!.error === null ? null : excerpt(scored[i]!.error!),
    }));
    const passed = recorded.filter((c) => c.passed).length;
    const event: AgentEvaluated = {
      type: 'AgentEvaluated',
      data: {
        agentId: Number(agent.id),
        project: project.name,
        name: agent.name,
        agentVersion: agent.version.toString(),
        scoring,
        tolerance: scoring === 'numeric' ? (options.tolerance ?? 0) : null,
        rubric: options.rubric ?? null,
        judge: judging?.summary ?? null,
        source: named,
        testSetDigest: testSetDigest(cases.map((c) => [c.question, c.expected])),
        cases: recorded,
        passed,
        passRate: passed / recorded.length,
        meanScore: recorded.reduce((sum, c) => sum + c.score, 0) / recorded.length,
        msPerCase: (performance.now() - started) / recorded.length,
        evaluatedAt: ctx.clock().toISOString(),
      },
    };
    const outcome = await ctx.commands.run(agentEvaluationsStream(agent.id), FACTS, () => [event]);
    await settled(ctx, outcome.lastPosition);
    return presentAgentEvaluation(outcome.lastPosition ?? 0n, event.data);
  };

  const agentOf = async (projectName: string, agentRef: string) => {
    const project = await projects.require(projectName);
    return requireAgent((await loadProject(ctx, projects, project.name)).agents, agentRef);
  };

  /** An agent's evaluations, newest first. */
  const list = async (projectName: string, agentRef: string, limit: number) =>
    (await agentEvaluationRowsOf(ctx.duck, (await agentOf(projectName, agentRef)).id, limit)).map(
      presentEvaluationRow,
    );

  /**
   * Two evaluations of the agent side by side (typically of two versions, on one test set): each
   * case's answer, score and pass in both, by case number, and whether its pass changed.
   */
  const compare = async (projectName: string, agentRef: string, before: bigint, after: bigint) => {
    const agent = await agentOf(projectName, agentRef);
    const found = async (id: bigint) => {
      const row = await agentEvaluationRow(ctx.duck, agent.id, id);
      if (!row) throw notFound(`Agent ${agent.name} has no evaluation ${id}`, 'Evaluation not found');
      return { row, cases: await agentEvaluationCaseRows(ctx.duck, id) };
    };
    const [a, b] = [await found(before), await found(after)];
    const side = (c: AgentEvaluationCaseRow | undefined) =>
      c ? { answer: c.ANSWER, score: c.SCORE, passed: c.PASSED, trace_id: c.TRACE_ID, error: c.ERROR } : null;
    return {
      before: presentEvaluationRow(a.row),
      after: presentEvaluationRow(b.row),
      same_test_set: a.row.TEST_SET_DIGEST === b.row.TEST_SET_DIGEST,
      cases: Array.from({ length: Math.max(a.cases.length, b.cases.length) }, (_, i) => ({
        case_number: i + 1,
        question: (a.cases[i] ?? b.cases[i])!.QUESTION,
        before: side(a.cases[i]),
        after: side(b.cases[i]),
        changed: a.cases[i]?.PASSED !== b.cases[i]?.PASSED,
      })),
    };
  };

  return { evaluate, list, compare };
};

/** A row of agent_evaluations as REST shows it: the statement's summary columns. */
const presentEvaluationRow = (r: AgentEvaluationRow) => ({
  id: Number(r.ID),
  agent: r.AGENT,
  agent_version: Number(r.AGENT_VERSION),
  scoring: r.SCORING,
  cases: r.CASES,
  passed: r.PASSED,
  pass_rate: r.PASS_RATE,
  mean_score: r.MEAN_SCORE,
  ms_per_case: r.MS_PER_CASE,
  test_set_digest: r.TEST_SET_DIGEST,
  created_at: toMindsDbTimestamp(r.CREATED_AT),
});

/** An evaluation as its statement answers it: the summary, then each case. */
const presentAgentEvaluation = (id: bigint, d: AgentEvaluated['data']) => ({
  id: Number(id),
  agent: d.name,
  agent_version: Number(d.agentVersion),
  scoring: d.scoring,
  cases: d.cases.length,
  passed: d.passed,
  pass_rate: d.passRate,
  mean_score: d.meanScore,
  ms_per_case: d.msPerCase,
  test_set_digest: d.testSetDigest,
  created_at: toMindsDbTimestamp(d.evaluatedAt),
  case_results: d.cases.map((c, i) => ({
    case_number: i + 1,
    question: c.question,
    expected: c.expected,
    answer: c.answer,
    score: c.score,
    passed: c.passed,
    trace_id: c.traceId,
    error: c.error,
  })),
});

export type AgentEvaluationsService = ReturnType<typeof agentEvaluation>;
