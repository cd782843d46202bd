import type { DuckDBConnection } from '@duckdb/node-api';
import { constantValue, parseSelect, printSelect, walk, type AstNode } from './ast';
import { SqlError, SqlErrorCode } from './errors';
import type { Predictor } from '../ml/predict';
import type { ComputedRef, Prepared, Predictions } from './plan';
import { quoteIdent } from '../shared/quoting';

const baseTable = (table: string, alias: string): AstNode => ({
  type: 'BASE_TABLE',
  alias,
  sample: null,
  query_location: 0,
  schema_name: '',
  table_name: table,
  column_name_alias: [],
  catalog_name: '',
  at_clause: null,
});

/** Types for a temporary table built from JS values. */
const columnTypes = (names: string[], rows: Record<string, unknown>[]) =>
  names.map((name) => {
    const values = rows.map((r) => r[name]).filter((v) => v !== null && v !== undefined);
    const type =
      values.length && values.every((v) => typeof v === 'boolean')
        ? 'BOOLEAN'
        : values.length && values.every((v) => typeof v === 'number')
          ? values.every((v) => Number.isInteger(v))
            ? 'BIGINT'
            : 'DOUBLE'
          : 'VARCHAR';
    return { name, type };
  });

/** Equality conditions `col = constant` (ANDed) of a WHERE clause: the input of a one-row prediction. */
const whereEqualities = (where: AstNode | null | undefined): Record<string, unknown> => {
  const row: Record<string, unknown> = {};
  const visit = (n: AstNode | null | undefined) => {
    if (!n) return;
    if (n.class === 'CONJUNCTION' && n.type === 'CONJUNCTION_AND')
      for (const c of n.children as AstNode[]) visit(c);
    else if (n.class === 'COMPARISON' && n.type === 'COMPARE_EQUAL') {
      let [col, value] = [n.left as AstNode, n.right as AstNode];
      if (col.class !== 'COLUMN_REF') [col, value] = [value, col];
      if (col.class !== 'COLUMN_REF' || value.class !== 'CONSTANT') return;
      const names = col.column_names as string[];
      row[names[names.length - 1]!] = constantValue(value);
    }
  };
  visit(where);
  return row;
};

/**
 * Computes a model's predictions into a temporary table and rewrites the query onto it. Alone in
 * FROM, the model predicts one row built from the WHERE equalities (`WHERE sqft = 823 AND …`);
 * joined, it predicts every row of the other side, which is materialised first and paired with its
 * predictions position by position (a POSITIONAL JOIN of two tables in the same order).
 */
/** Rows into a typed temporary table through the appender (types from the values). */
const loadRows = async (
  c: DuckDBConnection,
  temps: string[],
  temp: string,
  names: readonly string[],
  rows: readonly Record<string, unknown>[],
) => {
  temps.push(temp);
  const columns = columnTypes([...names], [...rows]);
  const q = quoteIdent;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${q(temp)} (${columns.map((col) => `${q(col.name)} ${col.type}`).join(', ')})`,
  );
  const appender = await c.createAppender(temp);
  try {
    for (const row of rows) {
      for (const col of columns) {
        const v = row[col.name];
        if (v === null || v === undefined) appender.appendNull();
        else if (col.type === 'DOUBLE') appender.appendDouble(v as number);
        else if (col.type === 'BIGINT') appender.appendBigInt(BigInt(v as number));
        else if (col.type === 'BOOLEAN') appender.appendBoolean(v as boolean);
        else appender.appendVarchar(typeof v === 'string' ? v : JSON.stringify(v));
      }
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
};

/** The join that pairs the computed table with another, if the query has one. */
const joinOf = async (statement: AstNode, node: AstNode) => {
  let join: AstNode | undefined;
  await walk(statement, (n) => {
    if (n.type === 'JOIN' && (n.left === node || n.right === node)) join = n;
  });
  return join;
};

/** The other side of the join, materialised in DuckDB: its rows, in the order they will be paired. */
const joinedRows = async (c: DuckDBConnection, temps: string[], join: AstNode, node: AstNode) => {
  const other = (join.left === node ? join.right : join.left) as AstNode;
  const template = await parseSelect(c, 'SELECT * FROM __mindledger_source');
  (template.node as AstNode).from_table = other;
  const source = await printSelect(c, template);
  temps.push('__mindledger_input');
  await c.run(`CREATE OR REPLACE TEMP TABLE __mindledger_input AS ${source}`);
  const reader = await c.runAndReadAll('SELECT * FROM __mindledger_input');
  const columns = reader.columnNames();
  return {
    alias: String(other.alias || other.table_name || 'data'),
    rows: reader.getRowsJson().map((r) => Object.fromEntries(columns.map((col, i) => [col, r[i]]))),
  };
};

/** The join rewritten to pair the input with the computed rows position by position. */
const pairPositionally = (join: AstNode, node: AstNode, inputAlias: string, outputAlias: string) => {
  const input = baseTable('__mindledger_input', inputAlias);
  const output = baseTable('__mindledger_prediction', outputAlias);
  if (join.left === node) {
    join.left = output;
    join.right = input;
  } else {
    join.left = input;
    join.right = output;
  }
  join.ref_type = 'POSITIONAL';
  join.condition = null;
  join.join_type = 'INNER';
};

/**
 * Computes a model's predictions (or an agent's answers) into a temporary table and rewrites the
 * query onto it. Alone in FROM, it answers one row built from the WHERE equalities (`WHERE sqft =
 * 823 AND …`, `WHERE question = '…'`); joined, it answers every row of the other side, which is
 * materialised first and paired with its results position by position (a POSITIONAL JOIN).
 */
export const predictInto = async (
  c: DuckDBConnection,
  prepared: Extract<Prepared, { kind: 'model' }>,
  predictions: Predictions,
  temps: string[],
  options: AgentQueryOptions,
) => {
  const ref = prepared.refs[0]!;
  const statement = prepared.statement;
  const alias = String(ref.node.alias || ref.name);
  const join = await joinOf(statement, ref.node);
  if (ref.kind === 'model' && (await takeLatest(c, statement)))
    return forecastInto(c, statement, ref, join, alias, predictions, temps);
  const compute =
    ref.kind === 'agent'
      ? agentAnswers(predictions, ref, options)
      : await modelPredictions(predictions, ref, statement, alias);
  if (!join) {
    const input = whereEqualities((statement.node as AstNode).where_clause as AstNode | undefined);
    await loadRows(c, temps, '__mindledger_prediction', compute.columns, await compute.rows([input]));
    Object.assign(ref.node, baseTable('__mindledger_prediction', alias));
    return printSelect(c, statement);
  }
  const other = await joinedRows(c, temps, join, ref.node);
  await loadRows(c, temps, '__mindledger_prediction', compute.columns, await compute.rows(other.rows));
  pairPositionally(join, ref.node, other.alias, alias);
  return printSelect(c, statement);
};

/** DuckDB's own TRUE, for conditions taken out of a WHERE clause. */
const trueConstant = async (c: DuckDBConnection) =>
  ((await parseSelect(c, 'SELECT 1 WHERE true')).node as AstNode).where_clause as AstNode;

/** The AND-ed conditions of a WHERE clause, each with a way to replace it by TRUE. */
const conjunctsOf = (node: AstNode) => {
  const out: { condition: AstNode; replace: (by: AstNode) => void }[] = [];
  const visit = (n: AstNode | null | undefined, replace: (by: AstNode) => void) => {
    if (!n) return;
    if (n.class === 'CONJUNCTION' && n.type === 'CONJUNCTION_AND') {
      const children = n.children as AstNode[];
      children.forEach((child, i) => visit(child, (by) => (children[i] = by)));
    } else out.push({ condition: n, replace });
  };
  visit(node.where_clause as AstNode | null, (by) => (node.where_clause = by));
  return out;
};

/** `<column> > LATEST`: MindsDB's "forecast after the latest rows". */
const isLatest = (n: AstNode) => {
  if (n.class !== 'COMPARISON' || n.type !== 'COMPARE_GREATERTHAN') return false;
  const right = n.right as AstNode;
  const names = right.class === 'COLUMN_REF' ? (right.column_names as string[]) : [];
  return names.length === 1 && names[0]!.toUpperCase() === 'LATEST';
};

/** Takes every `… > LATEST` out of the WHERE clause (TRUE in its place); whether there was one. */
const takeLatest = async (c: DuckDBConnection, statement: AstNode) => {
  const node = statement.node as AstNode;
  const latest = conjunctsOf(node).filter((x) => isLatest(x.condition));
  if (latest.length === 0) return false;
  for (const x of latest) x.replace(await trueConstant(c));
  return true;
};

/** Whether every column a condition names is qualified by `alias` (and it names one at least). */
const onlyColumnsOf = async (condition: AstNode, alias: string) => {
  let own = 0;
  let other = 0;
  await walk(condition, (n) => {
    if (n.class !== 'COLUMN_REF') return;
    const names = n.column_names as string[];
    if (names.length >= 2 && names[0]!.toLowerCase() === alias.toLowerCase()) own++;
    else other++;
  });
  return own > 0 && other === 0;
};

/**
 * `SELECT m.t, m.y FROM data AS t JOIN p.m AS m WHERE t.t > LATEST [AND t.g = …]`: the model's next
 * `horizon` steps after the joined rows, per group. The conditions on the data alone choose the
 * history (MindsDB filters the data it reads); each forecast row is paired with its group's last
 * history row, dated at the forecast's time and without a target value, so `t.*` reads as the
 * rows that would come next.
 */
const forecastInto = async (
  c: DuckDBConnection,
  statement: AstNode,
  ref: ComputedRef,
  join: AstNode | undefined,
  alias: string,
  predictions: Predictions,
  temps: string[],
) => {
  const predictor = await predictions.predictor(ref.project, ref.name);
  const artifact = predictor.artifact;
  if (!predictor.forecast || artifact.task !== 'forecast')
    throw new SqlError(
      SqlErrorCode.Invalid,
      `Model ${ref.name} is not a time-series model: WHERE … > LATEST forecasts with a model made with ORDER BY … [GROUP BY …] WINDOW n HORIZON h`,
    );
  if (!join)
    throw new SqlError(
      SqlErrorCode.Invalid,
      `WHERE … > LATEST forecasts after the rows of a table: JOIN ${ref.name} with its data (SELECT … FROM data AS t JOIN ${ref.name} AS m WHERE t.${artifact.timeseries.orderBy} > LATEST)`,
    );
  const other = (join.left === ref.node ? join.right : join.left) as AstNode;
  const otherAlias = String(other.alias || other.table_name || 'data');

  // The history: the joined table under the conditions that name only its columns.
  const pushed: AstNode[] = [];
  for (const x of conjunctsOf(statement.node as AstNode))
    if (await onlyColumnsOf(x.condition, otherAlias)) {
      pushed.push(structuredClone(x.condition));
      x.replace(await trueConstant(c));
    }
  const template = await parseSelect(c, 'SELECT * FROM __mindledger_source');
  const select = template.node as AstNode;
  select.from_table = other;
  select.where_clause = pushed.length
    ? pushed.length === 1
      ? pushed[0]!
      : { class: 'CONJUNCTION', type: 'CONJUNCTION_AND', alias: '', query_location: 0, children: pushed }
    : null;
  temps.push('__mindledger_history');
  await c.run(`CREATE OR REPLACE TEMP TABLE __mindledger_history AS ${await printSelect(c, template)}`);
  const reader = await c.runAndReadAll('SELECT * FROM __mindledger_history');
  const historyColumns = reader.columnNames();
  // Each history row carries its index as the row id, which a forecast row keeps from its anchor.
  const history = reader.getRowsJson().map((r, i): Record<string, unknown> => ({
    ...Object.fromEntries(historyColumns.map((col, k) => [col, r[k]])),
    __mindsdb_row_id: i,
  }));

  const columns = await wantedColumns(predictor, statement, alias);
  const forecasts = predictor.forecast(history, { wanted: new Set(columns) });
  const { orderBy } = artifact.timeseries;
  const inputs = forecasts.map((f) => {
    const anchor = history[f.__mindsdb_row_id as number] ?? {};
    const row: Record<string, unknown> = {};
    for (const col of historyColumns) row[col] = anchor[col] ?? null;
    if (orderBy in row) row[orderBy] = f[orderBy];
    if (artifact.target in row) row[artifact.target] = null;
    return row;
  });
  await loadRows(c, temps, '__mindledger_input', historyColumns, inputs);
  await loadRows(c, temps, '__mindledger_prediction', columns, forecasts);
  pairPositionally(join, ref.node, otherAlias, alias);
  return printSelect(c, statement);
};

type Computation = {
  columns: readonly string[];
  rows: (inputs: Record<string, unknown>[]) => Promise<Record<string, unknown>[]>;
};

/** The model's columns the query uses (a star wants them all), in the model's order. */
const wantedColumns = async (predictor: Predictor, statement: AstNode, alias: string) => {
  const wanted = new Set<string>();
  let everything = false;
  await walk(statement, (n) => {
    if (
      n.class === 'STAR' &&
      (!n.relation_name || String(n.relation_name).toLowerCase() === alias.toLowerCase())
    )
      everything = true;
    if (n.class === 'COLUMN_REF') {
      const names = n.column_names as string[];
      if (names.length === 1 || names[0]!.toLowerCase() === alias.toLowerCase())
        wanted.add(names[names.length - 1]!);
    }
  });
  const all = predictor.outputColumns.filter((col) => col !== '__mindsdb_row_id');
  const picked = everything ? all : all.filter((col) => wanted.has(col));
  return picked.length ? picked : [predictor.artifact.target];
};

/** Only the model's columns the query uses are computed and loaded. */
const modelPredictions = async (
  predictions: Predictions,
  ref: ComputedRef,
  statement: AstNode,
  alias: string,
): Promise<Computation> => {
  const predictor = await predictions.predictor(ref.project, ref.name);
  const columns = await wantedColumns(predictor, statement, alias);
  return { columns, rows: async (inputs) => predictor.predict(inputs, { wanted: new Set(columns) }) };
};

/** How many questions of one query are asked at once, and at most in all (each is a model call or more). */
export type AgentQueryOptions = { concurrency: number; maxRows: number; signal: AbortSignal };

/** MindsDB's agent table: `answer`, `context`, `trace_id`, and the question asked. */
const AGENT_COLUMNS = ['answer', 'context', 'trace_id', 'question'] as const;

/**
 * An agent answers each row's question (MindsDB answers only the last row of a join and treats the
 * others as history; here every row gets its own run), a few at a time.
 */
const agentAnswers = (
  predictions: Predictions,
  ref: ComputedRef,
  options: AgentQueryOptions,
): Computation => ({
  columns: AGENT_COLUMNS,
  rows: async (inputs) => {
    if (inputs.length > options.maxRows)
      throw new SqlError(
        SqlErrorCode.TooLarge,
        `Agent ${ref.name} would answer ${inputs.length} rows; a query may ask at most ${options.maxRows} (AGENT_SQL_MAX_ROWS): add a LIMIT`,
      );
    const questions = inputs.map((row, i) => {
      const question = row.question ?? row.content;
      if (question === undefined || question === null || String(question).trim() === '')
        throw new SqlError(
          SqlErrorCode.Invalid,
          inputs.length === 1
            ? `Ask agent ${ref.name} with WHERE question = '…'`
            : `Row ${i + 1} has no question for agent ${ref.name}: the joined rows need a "question" column`,
        );
      return String(question);
    });
    const answers: Record<string, unknown>[] = new Array(questions.length);
    let next = 0;
    const worker = async () => {
      while (next < questions.length) {
        const i = next++;
        const a = await predictions.ask(ref.project, ref.name, questions[i]!, options.signal);
        answers[i] = {
          answer: a.answer,
          context: a.context.length ? JSON.stringify(a.context) : null,
          trace_id: a.traceId,
          question: questions[i],
        };
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency, questions.length) }, worker));
    return answers;
  },
});
