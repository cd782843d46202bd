import { selectRow, selectRows, type RowOf } from '../projection/table';
import { deletableTable } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';

/**
 * `agent_evaluations`: one row per `EVALUATE AGENT` (its id the event's position), with the agent's
 * version it ran against, so two evaluations of one test set (TEST_SET_DIGEST) compare versions.
 */
export const agentEvaluationsTable = deletableTable({
  table: 'agent_evaluations',
  key: 'ID',
  columns: columns(
    `ID BIGINT, AGENT_ID BIGINT, PROJECT VARCHAR, AGENT VARCHAR, AGENT_VERSION BIGINT, SCORING VARCHAR,
    TOLERANCE DOUBLE NULL, RUBRIC VARCHAR NULL, JUDGE_PROVIDER VARCHAR NULL, JUDGE_MODEL VARCHAR NULL,
    SOURCE VARCHAR, TEST_SET_DIGEST VARCHAR, CASES INTEGER, PASSED INTEGER, PASS_RATE DOUBLE,
    MEAN_SCORE DOUBLE, MS_PER_CASE DOUBLE, CREATED_AT TIMESTAMP`,
  ),
  handles: ['AgentEvaluated', 'AgentDeleted'],
  // An agent's deletion removes its evaluations' rows (its evaluations stream keeps them).
  deletedBy: { type: 'AgentDeleted', column: 'AGENT_ID', id: (e) => e.data.agentId },
  apply: ({ data: d, meta }, rows) =>
    rows.insert({
      ID: meta.position,
      AGENT_ID: d.agentId,
      PROJECT: d.project,
      AGENT: d.name,
      AGENT_VERSION: BigInt(d.agentVersion),
      SCORING: d.scoring,
      TOLERANCE: d.tolerance,
      RUBRIC: d.rubric,
      JUDGE_PROVIDER: d.judge?.provider ?? null,
      JUDGE_MODEL: d.judge?.model ?? null,
      SOURCE: d.source,
      TEST_SET_DIGEST: d.testSetDigest,
      CASES: d.cases.length,
      PASSED: d.passed,
      PASS_RATE: d.passRate,
      MEAN_SCORE: d.meanScore,
      MS_PER_CASE: d.msPerCase,
      CREATED_AT: d.evaluatedAt,
    }),
});

/** `agent_evaluation_cases`: each case of each evaluation, in order (CASE_NUMBER from 1), with its run's trace id. */
export const agentEvaluationCasesTable = deletableTable({
  table: 'agent_evaluation_cases',
  key: 'CASE_KEY',
  columns: columns(
    // `<evaluation id>-<case number>`: one row per case.
    'CASE_KEY VARCHAR',
    `EVALUATION_ID BIGINT, CASE_NUMBER INTEGER, AGENT_ID BIGINT, PROJECT VARCHAR, AGENT VARCHAR,
    AGENT_VERSION BIGINT, QUESTION VARCHAR, EXPECTED VARCHAR, ANSWER VARCHAR, SCORE DOUBLE,
    PASSED BOOLEAN, TRACE_ID VARCHAR NULL, ERROR VARCHAR NULL`,
  ),
  handles: ['AgentEvaluated', 'AgentDeleted'],
  deletedBy: { type: 'AgentDeleted', column: 'AGENT_ID', id: (e) => e.data.agentId },
  apply: ({ data: d, meta }, rows) => {
    for (const [i, c] of d.cases.entries())
      rows.insert({
        CASE_KEY: `${meta.position}-${i + 1}`,
        EVALUATION_ID: meta.position,
        CASE_NUMBER: i + 1,
        AGENT_ID: d.agentId,
        PROJECT: d.project,
        AGENT: d.name,
        AGENT_VERSION: BigInt(d.agentVersion),
        QUESTION: c.question,
        EXPECTED: c.expected,
        ANSWER: c.answer,
        SCORE: c.score,
        PASSED: c.passed,
        TRACE_ID: c.traceId,
        ERROR: c.error,
      });
  },
});

export type AgentEvaluationRow = RowOf<typeof agentEvaluationsTable.columns>;
export type AgentEvaluationCaseRow = RowOf<typeof agentEvaluationCasesTable.columns>;

/** One agent's evaluations, newest first. */
export const agentEvaluationRowsOf = (reader: TableReader, agentId: bigint, limit: number) =>
  selectRows(
    agentEvaluationsTable,
    reader,
    'SELECT * FROM agent_evaluations WHERE AGENT_ID = ? ORDER BY ID DESC LIMIT ?',
    [agentId, limit],
  );

/** One evaluation of the agent, if it is the agent's. */
export const agentEvaluationRow = (reader: TableReader, agentId: bigint, id: bigint) =>
  selectRow(agentEvaluationsTable, reader, 'SELECT * FROM agent_evaluations WHERE AGENT_ID = ? AND ID = ?', [
    agentId,
    id,
  ]);

/** An evaluation's cases, in order. */
export const agentEvaluationCaseRows = (reader: TableReader, id: bigint) =>
  selectRows(
    agentEvaluationCasesTable,
    reader,
    'SELECT * FROM agent_evaluation_cases WHERE EVALUATION_ID = ? ORDER BY CASE_NUMBER',
    [id],
  );
