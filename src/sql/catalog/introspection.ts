import { DESCRIBE_ATTRIBUTES } from '../../shared/modelAttributes';
import type { Externals } from '../faces/integration/federation';
import type { CatalogResolver } from './catalog';
import type { TablePolicy } from '../pipeline/plan';
import type { Deadline } from '../deadline';
import { externalError, SqlError, SqlErrorCode } from '../errors';
import { toDuckDbDialect } from '../lexical';
import { isClientSessionVariable, mysqlCompatAnswers } from '../statements/mysqlCompat';
import type { MindsStatement } from '../parse';
import type { SqlPorts } from '../ports';
import type { ExternalDatabase } from '../../integrations/drivers';
import type { TableAnswer } from '../answers';
import { catalogColumnsQuery, listedColumns } from '../../shared/sqlAnswers';
import { nameKey } from '../../shared/names';
import { quoteIdent, quoteString } from '../../shared/quoting';
import { mysqlTypeName } from '../../mysql/session/answers/describe';
import { externalRelations } from './catalogListing';

/** Runs our own SQL (DuckDB dialect, MindsDB names) with a client's parameters. */
type InternalQuery = (
  sql: string,
  db: string,
  deadline: Deadline,
  params?: Record<string, unknown>,
  placeholders?: string[],
) => Promise<TableAnswer>;

/** What SHOW, DESCRIBE and SET read with. */
type IntrospectionDeps = {
  internal: InternalQuery;
  services: Pick<SqlPorts, 'projectExists' | 'databaseExists' | 'models'>;
  catalog: CatalogResolver;
  externals: Externals;
  /** The caller's table policy: what it names is checked as its SELECTs would be. */
  policy: () => TablePolicy | undefined;
  settingExists: (name: string) => Promise<boolean>;
};

const str = quoteString;

/**
 * SHOW TABLES of an external database: its relations, as the catalog lists them (TABLES reads the
 * same listing); a database that cannot be reached says so here, where TABLES leaves it out.
 */
const externalTables = async (
  db: ExternalDatabase,
  integration: string,
  s: Extract<MindsStatement, { kind: 'Show' }>,
  column: string,
): Promise<TableAnswer> => {
  const tables = (
    await externalRelations(db).catch((error: unknown) => {
      throw externalError(integration, error);
    })
  ).map((r) => r.table);
  const like =
    s.like === null
      ? null
      : new RegExp(
          `^${s.like
            .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
            .replace(/%/g, '.*')
            .replace(/_/g, '.')}$`,
          'i',
        );
  const rows = tables.filter((t) => !like || like.test(t)).map((t) => (s.full ? [t, 'BASE TABLE'] : [t]));
  return {
    type: 'table' as const,
    column_names: s.full ? [column, 'Table_type'] : [column],
    column_types: s.full ? ['VARCHAR', 'VARCHAR'] : ['VARCHAR'],
    data: rows,
  };
};

/** SHOW: answered from the information schema views (and, for an external database's tables, by the database itself). */
const shows = ({ internal, services, catalog, externals, policy }: IntrospectionDeps) => {
  const userFilter = (where: string | null) => {
    if (!where) return { clause: '', placeholders: [] as string[] };
    const d = toDuckDbDialect(where);
    return { clause: ` WHERE ${d.sql}`, placeholders: d.placeholders };
  };

  const isProject = services.projectExists;

  const show = async (
    s: Extract<MindsStatement, { kind: 'Show' }>,
    db: string,
    params: Record<string, unknown>,
    deadline: Deadline,
  ) => {
    const compat = mysqlCompatAnswers[s.what];
    if (compat) return compat();
    const like = s.like === null ? null : str(s.like);
    const where = userFilter(s.where);
    const wrap = async (inner: string, nameColumn: string) =>
      internal(
        `SELECT * FROM (${inner}) AS shown${like ? ` WHERE "${nameColumn}" LIKE ${like}` : ''}${where.clause ? (like ? ' AND ' : ' WHERE ') + where.clause.slice(7) : ''}`,
        db,
        deadline,
        params,
        where.placeholders,
      );
    switch (s.what) {
      case 'DATABASES':
        return wrap(
          `SELECT NAME AS "Database"${s.full ? ', TYPE, ENGINE' : ''} FROM information_schema.DATABASES`,
          'Database',
        );
      case 'PROJECTS':
        return wrap(
          `SELECT NAME AS project FROM information_schema.DATABASES WHERE TYPE = 'project'`,
          'project',
        );
      case 'TABLES': {
        const target = s.from ?? db;
        if (!(await services.databaseExists(target)))
          throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${target} does not exist`);
        const column = `Tables_in_${target}`;
        policy()?.check(target, '(tables)');
        const integration = await catalog.integration(target);
        if (integration) return externalTables(await externals.get(integration), integration, s, column);
        return wrap(
          `SELECT TABLE_NAME AS "${column}"${s.full ? ', TABLE_TYPE AS "Table_type"' : ''} FROM information_schema.TABLES WHERE lower(TABLE_SCHEMA) = ${str(nameKey(target))}`,
          column,
        );
      }
      case 'ML_ENGINES':
      case 'HANDLERS':
        return wrap(`SELECT * FROM information_schema.${s.what}`, 'NAME');
      default: {
        // SHOW MODELS | AGENTS | SKILLS | CHATBOTS | KNOWLEDGE_BASES | JOBS | VIEWS | TRIGGERS
        const project = s.from ?? db;
        if (s.from && !(await isProject(s.from)))
          throw new SqlError(SqlErrorCode.UnknownDatabase, `Project ${s.from} does not exist`);
        if (await isProject(project)) policy()?.check(project, s.what.toLowerCase());
        const scoped = (await isProject(project)) ? ` WHERE lower(PROJECT) = ${str(nameKey(project))}` : '';
        return wrap(`SELECT * FROM information_schema.${s.what}${scoped}`, 'NAME');
      }
    }
  };

  return show;
};

/**
 * `DESCRIBE [MODEL] [project.]model[.version][.attribute]` (MindsDB's `DESCRIBE p.m.features`):
 * the version meant and the attribute asked for (`info` when none). Of two names, `a.features`
 * is the attribute of model `a` when the current project has one, else project a's model.
 */
const describedModel = async (
  models: IntrospectionDeps['services']['models'],
  parts: string[],
  db: string,
) => {
  // The JS SDK's describeAttribute(attribute, unique_id): MindsDB's per-series descriptions of
  // engines that keep one model per series; this engine keeps one model per version.
  const beforeLast = parts.length >= 3 ? parts[parts.length - 2]!.toLowerCase() : '';
  if ((DESCRIBE_ATTRIBUTES as readonly string[]).includes(beforeLast))
    throw new SqlError(
      SqlErrorCode.Invalid,
      `DESCRIBE ${parts.join('.')}: per-series descriptions (${beforeLast}.<unique id>) are not supported; DESCRIBE …${beforeLast} describes the whole version`,
    );
  let names = parts;
  let attribute = 'info';
  const last = parts[parts.length - 1]!.toLowerCase();
  if (
    parts.length >= 2 &&
    (DESCRIBE_ATTRIBUTES as readonly string[]).includes(last) &&
    (parts.length > 2 || (await models.exists(db, parts[0]!)))
  ) {
    attribute = last;
    names = parts.slice(0, -1);
  }
  const [a, b, c] = names as [string, string?, string?];
  if (b === undefined) return { project: db, ref: a, attribute };
  if (c === undefined)
    return /^\d+$/.test(b) ? { project: db, ref: `${a}.${b}`, attribute } : { project: a, ref: b, attribute };
  return { project: a, ref: `${b}.${c}`, attribute };
};

/** `[project.]table` when a DESCRIBE without a kind names no model but may name a table. */
const describedTable = async (
  models: IntrospectionDeps['services']['models'],
  parts: string[],
  db: string,
) => {
  if (parts.length > 2) return undefined;
  const [first, second] = parts as [string, string | undefined];
  if (await models.exists(db, first)) return undefined;
  if (second === undefined) return { database: db, table: first };
  if (await models.exists(first, second)) return undefined;
  return { database: first, table: second };
};

/** DESCRIBE MODEL: the model's description of the attribute asked for, typed by its values. */
const describeModel = async (
  { services, policy }: IntrospectionDeps,
  parts: string[],
  db: string,
): Promise<TableAnswer> => {
  const models = services.models;
  const { project, ref, attribute } = await describedModel(models, parts, db);
  policy()?.check(project, ref);
  const records = (await models.describe(project, ref, attribute)) as Record<string, unknown>[];
  const columns = Object.keys(records[0] ?? {});
  const typeOf = (c: string) => {
    const values = records.map((r) => r[c]).filter((v) => v !== null && v !== undefined);
    return values.length > 0 && values.every((v) => typeof v === 'number') ? 'DOUBLE' : 'VARCHAR';
  };
  return {
    type: 'table' as const,
    column_names: columns,
    column_types: columns.map(typeOf),
    data: records.map((r) => columns.map((c) => r[c] ?? null)),
  };
};

/** DESCRIBE: a model's attributes, a table's columns (as the catalog lists them), or a named object's row. */
const describes = (deps: IntrospectionDeps) => {
  const { internal, services, policy } = deps;
  const models = services.models;
  /**
   * A table's columns as the catalog lists them (information_schema.COLUMNS), in order; what it
   * does not list (an agent, a view whose columns cannot be learnt) as `SELECT * … LIMIT 0` answers.
   */
  const catalogColumns = async (t: { database: string; table: string }, db: string, deadline: Deadline) => {
    const answer = await internal(catalogColumnsQuery(t.database, t.table, str), db, deadline).catch(
      () => undefined,
    );
    const listed = answer && listedColumns(answer, t.table);
    return listed && { column_names: listed.names, column_types: listed.types };
  };

  /** A table's columns as MySQL's DESCRIBE lists them: the catalog's (`catalogColumns`). */
  const describeColumns = async (t: { database: string; table: string }, db: string, deadline: Deadline) => {
    policy()?.check(t.database, t.table);
    const shape =
      (await catalogColumns(t, db, deadline)) ??
      (await internal(
        `SELECT * FROM ${quoteIdent(t.database)}.${quoteIdent(t.table)} LIMIT 0`,
        db,
        deadline,
      ).catch((error: unknown) => {
        if (error instanceof SqlError && error.code === SqlErrorCode.UnknownTable)
          throw new SqlError(
            SqlErrorCode.UnknownTable,
            `No model or table is called ${t.table} in ${t.database} (${error.message})`,
          );
        throw error;
      }));
    const columns = ['Field', 'Type', 'Null', 'Key', 'Default', 'Extra'];
    return {
      type: 'table' as const,
      column_names: columns,
      column_types: columns.map(() => 'VARCHAR'),
      data: shape.column_names.map((name, i) => [
        name,
        mysqlTypeName(shape.column_types[i]!),
        'YES',
        '',
        null,
        '',
      ]),
    };
  };

  const describe = async (
    d: Extract<MindsStatement, { kind: 'Describe' }>,
    db: string,
    deadline: Deadline,
  ) => {
    const [first, second] = d.name;
    const kind = d.what ?? 'MODEL';
    // MySQL's DESCRIBE of a table (= SHOW COLUMNS), which tools send, when no model has that name.
    const tableMeant = d.what === null ? await describedTable(models, d.name, db) : undefined;
    if (tableMeant) return describeColumns(tableMeant, db, deadline);
    if (kind === 'MODEL') return describeModel(deps, d.name, db);
    if (kind === 'DATABASE' || kind === 'PROJECT') {
      // What it names is checked as a SELECT of it would be (SHOW TABLES FROM … too): a project-scoped
      // caller is refused another project or a database by name, not told it does not exist.
      policy()?.check(first!, '(database)');
      const t = await internal(
        `SELECT * FROM information_schema.DATABASES WHERE lower(NAME) = ${str(nameKey(first!))}`,
        db,
        deadline,
      );
      if (t.data.length === 0)
        throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${first} does not exist`);
      return t;
    }
    if (kind === 'ML_ENGINE')
      return internal(
        `SELECT * FROM information_schema.ML_ENGINES WHERE lower(NAME) = ${str(nameKey(first!))}`,
        db,
        deadline,
      );
    const project = second !== undefined ? first! : db;
    const name = second ?? first!;
    const table = kind === 'KNOWLEDGE_BASE' ? 'KNOWLEDGE_BASES' : `${kind}S`;
    policy()?.check(project, table.toLowerCase());
    const t = await internal(
      `SELECT * FROM information_schema.${table} WHERE lower(PROJECT) = ${str(nameKey(project))} AND lower(NAME) = ${str(nameKey(name))}`,
      db,
      deadline,
    );
    if (t.data.length === 0)
      throw new SqlError(
        SqlErrorCode.NotFound,
        `${kind.charAt(0)}${kind.slice(1).toLowerCase().replace('_', ' ')} ${project}.${name} does not exist`,
      );
    return t;
  };

  return describe;
};

/** SET: a client's session variables accepted and ignored; the database's settings refused. */
const setter = (deps: IntrospectionDeps) => async (text: string) => {
  const name =
    /^(?:(?:GLOBAL|SESSION|LOCAL)\s+)?@{0,2}(?:(?:session|global|local)\.)?([A-Za-z_][A-Za-z0-9_]*)/i.exec(
      text,
    )?.[1] ?? '';
  if (isClientSessionVariable(name)) return { type: 'ok' as const, affected_rows: null };
  if (await deps.settingExists(name))
    throw new SqlError(
      SqlErrorCode.Forbidden,
      `SET ${name} is not allowed: the database's settings cannot be changed from SQL`,
    );
  return { type: 'ok' as const, affected_rows: null };
};

/**
 * SHOW, DESCRIBE and SET: statements about the catalog and the session, answered from the
 * information schema views (and, for external databases, by the database itself).
 */
export const introspection = (deps: IntrospectionDeps) => ({
  show: shows(deps),
  describe: describes(deps),
  set: setter(deps),
});
export type Introspection = ReturnType<typeof introspection>;
