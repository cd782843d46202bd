import type { ObjectColumn } from './catalog';
import { deadlineIn } from '../deadline';
import { SqlErrorCode, toSqlError } from '../errors';
import { prepare } from '../pipeline/plan';
import { runSelect, type SelectDeps, type SelectInput, type SelectLimits } from '../pipeline/select';
import { quoteIdent, quoteString } from '../../shared/quoting';
import { nameKey } from '../../shared/names';
import { LISTED_MODELS } from './catalogListing';

/** A view that takes longer to describe (a slow external database) lists no columns until described again. */
const DESCRIBE_TIMEOUT_MS = 5_000;

/**
 * DuckDB's name for a type a model gave a feature when it learnt (DESCRIBE … .features): numbers
 * as numbers, dates as timestamps; classes (binary, categorical) and text as text.
 */
const MODEL_DTYPES: Record<string, string> = {
  integer: 'BIGINT',
  float: 'DOUBLE',
  quantity: 'DOUBLE',
  num_array: 'DOUBLE[]',
  date: 'TIMESTAMP',
  datetime: 'TIMESTAMP',
};
const duckTypeOfDtype = (dtype: unknown) => MODEL_DTYPES[String(dtype).toLowerCase()] ?? 'VARCHAR';

/** What the read model says of a model's columns: its features (as it learnt them) and its target. */
type ModelShape = { features: { name: string; dtype: unknown }[]; target: string; targetDtype: unknown };

const modelShapeOf = async (deps: SelectDeps, project: string, name: string) =>
  deps.duck.withReader(async (c): Promise<ModelShape | undefined> => {
    const rows = (
      await c.runAndReadAll(
        `SELECT CAST(COLUMNS AS VARCHAR), PREDICT, coalesce(TARGET_DTYPE, TARGET_TYPE) FROM ${LISTED_MODELS}
         WHERE lower(PROJECT) = ${quoteString(nameKey(project))} AND lower(NAME) = ${quoteString(nameKey(name))}`,
      )
    ).getRows();
    const row = rows[0];
    if (!row) return undefined;
    const features =
      row[0] === null ? [] : (JSON.parse(String(row[0])) as { name: string; dtype: unknown }[]);
    return { features, target: String(row[1]), targetDtype: row[2] };
  });

/**
 * A model's columns, as the catalog lists them (and MCP's describe_table with them): its features
 * typed as it typed them when it learnt (a prediction read with no rows types them all VARCHAR),
 * then its target and other outputs as a prediction answers them (`LIMIT 0`). A model that
 * answers no prediction (not trained, failed, an LLM model without its prompt's columns): its
 * target, typed as it learnt it.
 */
const modelColumns = async (
  shape: ModelShape,
  answered: () => Promise<{ column_names: readonly string[]; column_types: readonly string[] }>,
): Promise<ObjectColumn[]> => {
  const features = shape.features
    .filter((f) => f.name.toLowerCase() !== shape.target.toLowerCase())
    .map((f) => ({ name: f.name, type: duckTypeOfDtype(f.dtype) }));
  const known = new Set(features.map((f) => f.name.toLowerCase()));
  const outputs = await answered().then(
    (a) =>
      a.column_names.flatMap((name, i) =>
        known.has(name.toLowerCase()) ? [] : [{ name, type: a.column_types[i] ?? 'VARCHAR' }],
      ),
    (error: unknown) => {
      // Cut short (its deadline, no reader free): not the model's answer; described again next time.
      const code = toSqlError(error).code;
      if (code === SqlErrorCode.Interrupted || code === SqlErrorCode.Busy) throw error;
      return [{ name: shape.target, type: duckTypeOfDtype(shape.targetDtype) }];
    },
  );
  return [...features, ...outputs];
};

/**
 * The columns of a project's view, knowledge base or model as `SELECT * FROM project.name` answers them,
 * for information_schema.COLUMNS (and so psql's `\d`, DBeaver's and Grafana's column pickers).
 *
 * The query is planned; one that reads only the read model is described by DuckDB without running
 * (its prepared statement's columns). One that also searches a knowledge base or reads an external
 * database runs with LIMIT 0, as a view's query is checked when it is made (a knowledge base's
 * view is made without embedding anything; one external database is sent the LIMIT 0). A view that
 * queries a model or an agent is not run: its predictions or answers would be computed for the
 * rows it reads only to be thrown away; its columns are not listed (null).
 *
 * Run without the caller's policy: the columns are kept for every caller, and each is shown only
 * the objects of the projects it may list (the COLUMNS view joins them to the scoped rows).
 */
export const objectColumnsOf =
  (deps: SelectDeps, inputOf: (sql: string, db: string) => SelectInput, limits: SelectLimits) =>
  async (project: string, name: string): Promise<ObjectColumn[] | null> => {
    const sql = `SELECT * FROM ${quoteIdent(project)}.${quoteIdent(name)} LIMIT 0`;
    const timeoutMs = Math.min(limits.timeoutMs, DESCRIBE_TIMEOUT_MS);
    const deadline = deadlineIn(timeoutMs);
    const run = () =>
      runSelect(deps, inputOf(sql, project), { ...limits, timeoutMs, deadline, policy: undefined });
    const model = await modelShapeOf(deps, project, name);
    if (model) return modelColumns(model, run);
    const described = await deps.duck.withReader(
      async (c): Promise<ObjectColumn[] | null | undefined> => {
        const plan = await prepare(c, deps.catalog, sql, project, new Map(), deadline);
        if (plan.kind === 'model') return null;
        if (plan.kind !== 'local' || plan.searches.length > 0) return undefined;
        const statement = await c.prepare(plan.sql);
        try {
          const count = statement.columnCount;
          // The plan's names win where it has them, as in an answer (runSelect's namesOf).
          const names = plan.names?.length === count ? plan.names : [];
          return Array.from({ length: count }, (_, i) => ({
            name: names[i] ?? statement.columnName(i),
            type: String(statement.columnType(i)),
          }));
        } finally {
          statement.destroySync();
        }
      },
      { sql: true },
    );
    if (described !== undefined) return described;
    const answer = await run();
    return answer.column_names.map((column, i) => ({ name: column, type: answer.column_types[i]! }));
  };
