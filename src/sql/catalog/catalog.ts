import { AsyncLocalStorage } from 'node:async_hooks';
import type { DuckDBConnection } from '@duckdb/node-api';
import { FILES_SCHEMA } from '../../shared/names';
import { nameKey } from '../../shared/names';
import { SqlError, SqlErrorCode, toSqlError } from '../errors';
import { quoteIdent, quoteString } from '../../shared/quoting';
import { KB_SCHEMA } from '../../engines/search/layout';
import { inSnapshot, inTransaction } from '../../duckdb/transaction';
import { HISTORY_TABLES, rowsAsOf } from '../../projection/history';
import type { SqlCatalog, SqlLookups } from '../handlers';
import { catalogListingViews, LISTED_MODELS } from './catalogListing';

/** Where MindsDB's information_schema lives in DuckDB (DuckDB's own is read-only and must not win). */
export const IS_SCHEMA = 'mdb_information_schema';
/**
 * The columns of the projects' views, knowledge bases and models, as `SELECT *` of each answers
 * them (a model's features as it typed them when it learnt): what information_schema.COLUMNS lists
 * of them. Not a projection (a view's columns come from planning
 * its query, against the files, databases and views it reads now): derived from the read model
 * when COLUMNS is read and the catalog has changed since (`ensureObjectColumns`), keyed by the
 * object's id, and read only joined with its live row, so a dropped object is never listed.
 */
const OBJECT_COLUMNS_TABLE = 'mdb_object_columns.columns';

/** Per-project views (`<project>.skills`, …) live in schemas named after the project. */
const projectSchema = (project: string) => `mdb_project_${nameKey(project)}`;

const q = quoteString;

/**
 * What a caller scoped to one project (a project-scoped token, docs/security.md "Sign-in and roles") reads of
 * each table the information_schema views are built on: its project's rows only. The views read
 * `main.<table>`; for such a caller the same views read these filtered copies instead, so every
 * information_schema table, SHOW and DESCRIBE answer from one rule. A table not listed here answers
 * no rows: integrations (their connection data), ML engines, uploaded files and the log's streams
 * of users, sessions and tokens are not a project's (REST refuses them to such a token too).
 */
const scopeConditionsOf =
  (sliceCatalogs: readonly SqlCatalog[]) =>
  (project: string): Record<string, string> => {
    const p = q(nameKey(project));
    const ofProject = `lower(PROJECT) = ${p}`;
    return {
      projects: `lower(name) = ${p}`,
      ...Object.fromEntries(
        sliceCatalogs.flatMap((c) =>
          Object.entries(c.scopedRows ?? {}).map(([table, rows]) => [table, rows(ofProject)]),
        ),
      ),
      // The project's own stream and the streams of the resources it holds now, as each slice names
      // them (a deleted resource's stream, and server-kept conversation threads, are not listed).
      events: [
        `stream = ${q(`project-${nameKey(project)}`)}`,
        ...sliceCatalogs.flatMap((c) => (c.projectStreams ? [`(${c.projectStreams(ofProject)})`] : [])),
      ].join('\n    OR '),
    };
  };
/** The words of a SQL text, lower-case: every name it could read a table or view by. */
const wordsOf = (text: string): Set<string> => new Set(text.toLowerCase().match(/[a-z_][a-z0-9_$]*/g) ?? []);

/**
 * Per name of a view the catalog makes (information_schema's and each project's, lower-case, the
 * two kinds merged where they share a name): the words of its body and of every view it names in
 * turn. Over-counting is safe (an answer then depends on a table it does not read); missing one
 * is not, so every view made in DuckDB for a query to read is listed here.
 */
const namesReader = (views: [string, string][], projectTableSources: Readonly<Record<string, string>>) => {
  const viewWords: ReadonlyMap<string, ReadonlySet<string>> = (() => {
    const bodies = new Map<string, string>();
    const add = (name: string, body: string) =>
      bodies.set(name.toLowerCase(), `${bodies.get(name.toLowerCase()) ?? ''} ${body}`);
    for (const [name, body] of views) add(name, body);
    for (const [table, source] of Object.entries(projectTableSources))
      add(table, `SELECT * FROM ${IS_SCHEMA}."${source}"`);
    const words = new Map([...bodies].map(([name, body]) => [name, wordsOf(body)]));
    for (let grew = true; grew;) {
      grew = false;
      for (const found of words.values())
        for (const word of [...found])
          for (const more of words.get(word) ?? [])
            if (!found.has(more)) {
              found.add(more);
              grew = true;
            }
    }
    return words;
  })();

  /**
   * Every name a query's DuckDB text (its names resolved: views of information_schema and of the
   * projects, uploaded files' tables, AS OF reads spelled out) reads tables by, through the catalog's
   * views: the read model's tables it may read are among them (src/projection/readVersions.ts).
   */
  const namesReadBy = (text: string): ReadonlySet<string> => {
    const names = wordsOf(text);
    for (const word of [...names]) for (const name of viewWords.get(word) ?? []) names.add(name);
    return names;
  };
  return namesReadBy;
};

/** The information_schema tables built only from history-keeping tables: what `AS OF` can read (asOf.ts). */
const asOfQueries = (
  informationSchemaViews: Readonly<Record<string, string>>,
  projectTableSources: Readonly<Record<string, string>>,
  PROJECT_TABLES: readonly string[],
  scopeCondition: (project: string, table: string) => string,
) => {
  const AS_OF_SOURCES = Object.keys(informationSchemaViews).filter((name) => {
    const tables = [...informationSchemaViews[name]!.matchAll(/\bmain\.(\w+)/g)].map((m) => m[1]!);
    return tables.length > 0 && tables.every((t) => HISTORY_TABLES.has(t));
  });

  /**
   * The query answering `database.table AS OF POSITION position`: the information_schema table's (or
   * the project table's) own query, reading each table as of the position.
   */
  const asOfQuery = (
    database: string,
    table: string,
    position: bigint,
    /** A project-scoped caller's project: its rows only (null: every row). */
    scope: string | null = null,
  ): string => {
    const db = nameKey(database);
    const source =
      db === 'information_schema'
        ? AS_OF_SOURCES.find((t) => t.toLowerCase() === table.toLowerCase())
        : projectTableSources[PROJECT_TABLES.find((t) => t === table.toLowerCase()) ?? 'jobs_history'];
    if (!source || !AS_OF_SOURCES.includes(source))
      throw new SqlError(
        SqlErrorCode.Invalid,
        `AS OF is not supported for ${database}.${table}: it reads the resource tables (information_schema.${AS_OF_SOURCES.join(
          ', ',
        )} and each project's ${PROJECT_TABLES.filter((t) => AS_OF_SOURCES.includes(projectTableSources[t]!)).join(', ')})`,
      );
    const body = informationSchemaViews[source]!.replace(/\bmain\.(\w+)/g, (_m, t: string) =>
      scope === null
        ? `(${rowsAsOf(t, position)}) AS ${t}`
        : `(SELECT * FROM (${rowsAsOf(t, position)}) AS ${t} WHERE ${scopeCondition(scope, t)}) AS ${t}`,
    );
    return db === 'information_schema' ? body : `SELECT * FROM (${body}) WHERE lower(PROJECT) = ${q(db)}`;
  };
  return asOfQuery;
};

/** Creates (or refreshes) the information_schema views; run at start, after the projection tables exist. */
const installerOf = (views: [string, string][]) => async (writer: DuckDBConnection) => {
  // One call, in this order (DuckDB runs a text's statements in turn): a call per view made about
  // fifty trips to DuckDB's thread at every start.
  await writer.run(
    [
      `CREATE SCHEMA IF NOT EXISTS ${IS_SCHEMA}`,
      `CREATE SCHEMA IF NOT EXISTS ${OBJECT_COLUMNS_TABLE.split('.')[0]!}`,
      `CREATE TABLE IF NOT EXISTS ${OBJECT_COLUMNS_TABLE} (KIND VARCHAR, ID BIGINT, COLUMN_NAME VARCHAR, ORDINAL_POSITION BIGINT, DATA_TYPE VARCHAR)`,
      // What an earlier process described may be out of date: the first read of COLUMNS describes afresh.
      `DELETE FROM ${OBJECT_COLUMNS_TABLE}`,
      ...views.map(([name, body]) => `CREATE OR REPLACE VIEW ${IS_SCHEMA}."${name}" AS ${body}`),
    ].join(';\n'),
  );
};

/**
 * The catalog's tables, made from every slice's (`SqlCatalog`: listed once in
 * src/wiring/sqlSlices.ts and handed in, so src/sql imports no capability).
 */
export const catalogTables = (sliceCatalogs: readonly SqlCatalog[]) => {
  /** The virtual tables every project has, as MindsDB's project datanode exposes them (each slice's). */
  const PROJECT_TABLES: readonly string[] = sliceCatalogs.flatMap((c) => Object.keys(c.projectTables ?? {}));

  /** Each project table's information_schema table (its project's rows of it). */
  const projectTableSources: Readonly<Record<string, string>> = Object.assign(
    {},
    ...sliceCatalogs.map((c) => c.projectTables ?? {}),
  );

  /** The uploaded files' database in DATABASES: not listed to a project-scoped caller (scopedBody). */
  const FILES_DATABASE = `UNION ALL SELECT 'files', 'data', 'files', NULL`;

  /**
   * MindsDB's information_schema tables (upper-case columns, as MindsDB), as views over the
   * projections. Every one reads a projection table.
   */
  const informationSchemaViews: Record<string, string> = {
    DATABASES: `
    SELECT 'information_schema' AS NAME, 'system' AS TYPE, NULL::VARCHAR AS ENGINE, NULL::VARCHAR AS CONNECTION_DATA
    ${FILES_DATABASE}
    UNION ALL SELECT name, 'project', NULL, NULL FROM (SELECT name, id FROM main.projects ORDER BY id)
    UNION ALL SELECT name, 'data', engine, CAST(connection_data AS VARCHAR) FROM (SELECT * FROM main.databases ORDER BY id)`,
    ...Object.assign({}, ...sliceCatalogs.map((c) => c.informationSchema)),
    EVENTS: `SELECT global_position AS GLOBAL_POSITION, stream AS STREAM, stream_position AS STREAM_POSITION,
      event_id AS EVENT_ID, type AS TYPE, schema_version AS SCHEMA_VERSION, CAST(data AS VARCHAR) AS DATA,
      recorded_at AS RECORDED_AT, actor AS ACTOR, request_id AS REQUEST_ID, interface AS INTERFACE
      FROM main.events ORDER BY global_position`,
  };

  /** The standard tables, consistent with the MindsDB ones: every database, table and column we expose. */
  const standardViews: Record<string, string> = {
    SCHEMATA: `SELECT 'def' AS CATALOG_NAME, NAME AS SCHEMA_NAME, 'utf8mb4' AS DEFAULT_CHARACTER_SET_NAME,
      'utf8mb4_0900_ai_ci' AS DEFAULT_COLLATION_NAME FROM ${IS_SCHEMA}.DATABASES`,
    // The one catalog's two faces (src/sql/catalog/catalogListing.ts): every relation and its columns.
    ...catalogListingViews({
      informationSchema: IS_SCHEMA,
      objectColumns: OBJECT_COLUMNS_TABLE,
      systemTables: [...Object.keys(informationSchemaViews), 'SCHEMATA', 'TABLES', 'COLUMNS'],
      projectTables: Object.entries(projectTableSources),
    }),
  };

  const scopeConditions = scopeConditionsOf(sliceCatalogs);
  /** The condition on `main.<table>`'s rows a scoped caller reads: none of a table not listed. */
  const scopeCondition = (project: string, table: string) => scopeConditions(project)[table] ?? 'false';
  const views = [...Object.entries(informationSchemaViews), ...Object.entries(standardViews)];
  const namesReadBy = namesReader(views, projectTableSources);
  const asOfQuery = asOfQueries(informationSchemaViews, projectTableSources, PROJECT_TABLES, scopeCondition);
  const installCatalog = installerOf(views);

  /** Every table the information_schema views read (`main.<table>`). */
  const VIEW_SOURCES = [
    ...new Set(
      [...Object.values(informationSchemaViews), ...Object.values(standardViews)].flatMap((body) =>
        [...body.matchAll(/\bmain\.(\w+)/g)].map((m) => m[1]!),
      ),
    ),
  ];

  /** Where a scoped caller's information_schema lives: its views, and the filtered tables they read. */
  const scopedSchemas = (project: string) => ({
    views: `mdb_scoped_views_${nameKey(project)}`,
    rows: `mdb_scoped_rows_${nameKey(project)}`,
  });

  /** A view body reading the scoped copies of its tables (and of the other information_schema views). */
  const scopedBody = (body: string, project: string) => {
    const { views, rows } = scopedSchemas(project);
    return body
      .replace(FILES_DATABASE, '')
      .replace(/\bmain\.(\w+)/g, (_m, t: string) => `"${rows}".${t}`)
      .replaceAll(`${IS_SCHEMA}.`, `"${views}".`);
  };

  const INFORMATION_SCHEMA_TABLES = [...Object.keys(informationSchemaViews), ...Object.keys(standardViews)];

  return {
    PROJECT_TABLES,
    projectTableSources,
    informationSchemaViews,
    standardViews,
    scopeCondition,
    VIEW_SOURCES,
    scopedSchemas,
    scopedBody,
    asOfQuery,
    INFORMATION_SCHEMA_TABLES,
    installCatalog,
    namesReadBy,
  };
};

/** The catalog's tables (`catalogTables`), as the service and the resolver read them. */
type CatalogTables = ReturnType<typeof catalogTables>;

/** A table the query names, resolved to where it lives in DuckDB. */
type PhysicalTable = { schema: string; table: string };

/** The slices' look-ups (`SqlLookups`), and what the SQL interface learns itself. */
type CatalogLookup = SqlLookups & {
  /**
   * The columns `SELECT * FROM project.name` answers (a view, a knowledge base or a model), null when they
   * cannot be learnt without running more than the read model (a view of a model or an agent would
   * predict or ask). Throws what planning or reading threw. Absent: views and knowledge bases list
   * no columns.
   */
  columnsOf?(project: string, name: string): Promise<ObjectColumn[] | null>;
};

/** One column of a view or a knowledge base, with its DuckDB type. */
export type ObjectColumn = { name: string; type: string };

/**
 * What a view's or knowledge base's columns can depend on in the read model, per table: the rows
 * (or the parts of them) whose change may change a column. A knowledge base's row changes with
 * every insert, its columns only with its metadata fields (and its first insert, which types them).
 */
const COLUMN_SOURCES: Record<string, string> = {
  projects: 'hash(t)',
  views: 'hash(t)',
  files: 'hash(t)',
  databases: 'hash(t)',
  knowledge_bases: 'hash(ID, NAME, PROJECT, METADATA_COLUMNS, DIMENSIONS IS NULL)',
  // A model's columns: its features and outputs, which change with its version and status only
  // (not with its training's progress).
  models: 'hash(ID, NAME, PROJECT, ACTIVE, VERSION, STATUS, COLUMNS, TASK)',
};

/**
 * Columns learnt are kept while these tables are unchanged, but no longer than this: a view of an
 * external database follows that database's tables, which change outside the log.
 */
const OBJECT_COLUMNS_TTL_MS = 60_000;

/**
 * Errors after which a description is tried again at the next read: the read that described was
 * cut short (its deadline, its client gone), or no connection was free, not the object. A view
 * past its own time to describe (a slow external database) waits for the TTL instead, so it does
 * not hold every catalog read up.
 */
const TRANSIENT_CODES: ReadonlySet<number> = new Set([SqlErrorCode.Interrupted, SqlErrorCode.Busy]);

const summary = (table: string, row: string) =>
  `(SELECT count(*) || ':' || coalesce(sum(${row}::HUGEINT), 0) FROM ${table} AS t)`;

/**
 * A summary of every row an object's columns depend on (COLUMN_SOURCES, and each knowledge base's
 * metadata fields): equal summaries, equal columns (external databases' tables aside).
 */
const catalogFingerprint = async (c: DuckDBConnection) => {
  // One snapshot: a knowledge base dropped meanwhile takes its fields table with it.
  return inSnapshot(c, async () => {
    const fields = (
      await c.runAndReadAll(
        `SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND NOT temporary
           AND schema_name = ${q(KB_SCHEMA)} AND suffix(table_name, '_fields') ORDER BY 1`,
      )
    )
      .getRows()
      .map((r) => String(r[0]));
    const parts = [
      ...Object.entries(COLUMN_SOURCES).map(([table, row]) => summary(`main.${table}`, row)),
      ...fields.map((f) => `${q(f)} || ${summary(`${KB_SCHEMA}.${quoteIdent(f)}`, 'hash(t)')}`),
    ];
    const reader = await c.runAndReadAll(`SELECT concat_ws(',', ${parts.join(', ')})`);
    return String(reader.getRows()[0]?.[0] ?? '');
  });
};

/**
 * The views a query reads through, made on its own connection by the first query that needs them:
 * a project's tables, and a project-scoped caller's information_schema.
 */
const catalogViews = (tables: CatalogTables) => {
  /** Per schema, the one creation of its views: concurrent first queries wait for it. */
  const made = new Map<string, Promise<string>>();

  /**
   * Views are made by the first query that needs them, on its own connection, in one transaction
   * (a query never sees some of a schema's views and not the others). Two first queries at once
   * would create the same catalog entries in two transactions and one would fail with a write-write
   * conflict, so creation is single-flight per schema (and retried after a failure).
   */
  const ensureSchema = (schema: string, c: DuckDBConnection, create: () => Promise<void>) => {
    let creation = made.get(schema);
    if (!creation) {
      creation = inTransaction(c, create).then(() => schema);
      made.set(schema, creation);
      creation.catch(() => made.get(schema) === creation && made.delete(schema));
    }
    return creation;
  };

  const ensureProjectViews = (project: string, c: DuckDBConnection) => {
    const schema = projectSchema(project);
    return ensureSchema(schema, c, async () => {
      await c.run(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      for (const [table, source] of Object.entries(tables.projectTableSources))
        await c.run(
          `CREATE OR REPLACE VIEW "${schema}"."${table}" AS SELECT * FROM ${IS_SCHEMA}."${source}" WHERE lower(PROJECT) = ${q(nameKey(project))}`,
        );
    });
  };

  /** A project-scoped caller's information_schema: the same views over its project's rows only. */
  const ensureScopedViews = (project: string, c: DuckDBConnection) => {
    const { views, rows } = tables.scopedSchemas(project);
    return ensureSchema(views, c, async () => {
      await c.run(`CREATE SCHEMA IF NOT EXISTS "${rows}"`);
      await c.run(`CREATE SCHEMA IF NOT EXISTS "${views}"`);
      for (const table of tables.VIEW_SOURCES)
        await c.run(
          `CREATE OR REPLACE VIEW "${rows}".${table} AS SELECT * FROM main.${table} WHERE ${tables.scopeCondition(project, table)}`,
        );
      for (const [name, body] of [
        ...Object.entries(tables.informationSchemaViews),
        ...Object.entries(tables.standardViews),
      ])
        await c.run(`CREATE OR REPLACE VIEW "${views}"."${name}" AS ${tables.scopedBody(body, project)}`);
    });
  };

  return { ensureProjectViews, ensureScopedViews };
};

/** The columns of views, knowledge bases and models, kept in the object-columns table while they hold. */
const objectColumnsKeeper = (lookup: CatalogLookup) => {
  /** What the object-columns table holds: of which catalog, learnt when, and whether every object answered. */
  let described: { fingerprint: string; at: number; complete: boolean } | undefined;
  /** The description under way (one at a time: each rewrites the whole table). */
  let describing: Promise<void> | undefined;
  /** Set inside a description: a view that reads COLUMNS is described with what the table holds. */
  const inDescription = new AsyncLocalStorage<true>();

  /** Describes every view, knowledge base and model on `c` and puts their columns in the object-columns table. */
  const describeObjects = async (
    c: DuckDBConnection,
    fingerprint: string,
    columnsOf: NonNullable<CatalogLookup['columnsOf']>,
  ) => {
    const objects = (
      await c.runAndReadAll(
        `SELECT 'view', ID, PROJECT, NAME FROM main.views
         UNION ALL SELECT 'knowledge_base', ID, PROJECT, NAME FROM main.knowledge_bases
         UNION ALL SELECT 'model', ID, PROJECT, NAME FROM ${LISTED_MODELS} ORDER BY 2`,
      )
    ).getRows();
    let complete = true;
    const rows: string[] = [];
    for (const [kind, id, project, name] of objects) {
      const columns = await columnsOf(String(project), String(name)).catch((error: unknown) => {
        // A view that no longer plans (its file gone, its database down) lists no columns.
        if (TRANSIENT_CODES.has(toSqlError(error).code)) complete = false;
        return null;
      });
      for (const [i, col] of (columns ?? []).entries())
        rows.push(`(${q(String(kind))}, ${String(id)}, ${q(col.name)}, ${i + 1}, ${q(col.type)})`);
    }
    // One transaction: a reader sees the columns before or after, never half of them.
    await inTransaction(c, async () => {
      await c.run(`DELETE FROM ${OBJECT_COLUMNS_TABLE}`);
      for (let i = 0; i < rows.length; i += 1000)
        await c.run(`INSERT INTO ${OBJECT_COLUMNS_TABLE} VALUES ${rows.slice(i, i + 1000).join(', ')}`);
    });
    described = { fingerprint, at: Date.now(), complete };
  };

  /**
   * Before information_schema.COLUMNS is read: the views' and knowledge bases' columns, described
   * again when the tables they depend on changed since (or the last description is a minute old,
   * or was cut short). Most reads find them current after one small summary query; the prepared
   * plan and the answer of a COLUMNS read are cached per read-model version besides.
   */
  const ensureObjectColumns = async (c: DuckDBConnection, attempts = 2): Promise<void> => {
    const columnsOf = lookup.columnsOf;
    if (!columnsOf || inDescription.getStore()) return;
    const fingerprint = await catalogFingerprint(c);
    const d = described;
    if (d && d.fingerprint === fingerprint && d.complete && Date.now() - d.at < OBJECT_COLUMNS_TTL_MS) return;
    if (describing) {
      // Another query describes, on its connection: wait for it, then look again (it may have
      // described an older catalog, or failed with its own query).
      await describing.catch(() => undefined);
      if (attempts > 1) return ensureObjectColumns(c, attempts - 1);
      return;
    }
    const mine = inDescription.run(true, () => describeObjects(c, fingerprint, columnsOf));
    describing = mine;
    try {
      await mine;
    } finally {
      if (describing === mine) describing = undefined;
    }
  };

  return { ensureObjectColumns };
};

/** The query reading `database.table` as of a log position (AS OF); `database` a project or information_schema. */
const asOfReader =
  (lookup: CatalogLookup, tables: CatalogTables) =>
  async (database: string, table: string, position: bigint, scope: string | null = null): Promise<string> => {
    if (nameKey(database) === 'files')
      throw new SqlError(
        SqlErrorCode.Invalid,
        `AS OF is not supported for files.${table}: uploaded files keep no history, so a replay as of a past position cannot read them (read files.${table} as it is now)`,
      );
    if (nameKey(database) !== 'information_schema' && !(await lookup.isProject(database))) {
      const integration = await lookup.isIntegration(database);
      throw new SqlError(
        integration ? SqlErrorCode.Invalid : SqlErrorCode.UnknownDatabase,
        integration
          ? `AS OF is not supported for ${database}.${table}: ${integration} is an external database, whose history is not in the log`
          : `Database ${database} does not exist`,
      );
    }
    return tables.asOfQuery(database, table, position, scope);
  };

export const catalogResolver = (lookup: CatalogLookup, tables: CatalogTables) => {
  const { ensureProjectViews, ensureScopedViews } = catalogViews(tables);
  const { ensureObjectColumns } = objectColumnsKeeper(lookup);
  const asOf = asOfReader(lookup, tables);

  /**
   * Resolves MindsDB names: `information_schema.X`, `<project>.<table>`, or a bare table in the
   * context database; a project's views are made the first time one of its tables is queried.
   * `c` is the connection the query runs on (views are made there, never on a second pooled one).
   * `scope`: the project a project-scoped caller is held to; its information_schema holds that
   * project's rows only.
   */
  const resolve = async (
    database: string,
    table: string,
    c: DuckDBConnection,
    scope: string | null = null,
  ): Promise<PhysicalTable> => {
    const db = nameKey(database);
    const informationSchema = () => (scope === null ? IS_SCHEMA : ensureScopedViews(scope, c));
    if (db === 'information_schema') {
      const name = tables.INFORMATION_SCHEMA_TABLES.find((t) => t.toLowerCase() === table.toLowerCase());
      if (!name)
        throw new SqlError(SqlErrorCode.UnknownTable, `Table information_schema.${table} does not exist`);
      if (name === 'COLUMNS') await ensureObjectColumns(c);
      return { schema: await informationSchema(), table: name };
    }
    // MindsDB's log database: the history of every job.
    if (db === 'log' && table.toLowerCase() === 'jobs_history')
      return { schema: await informationSchema(), table: 'JOBS_HISTORY' };
    const project = await lookup.isProject(database);
    if (project) {
      const t = tables.PROJECT_TABLES.find((x) => x === table.toLowerCase());
      if (!t) throw new SqlError(SqlErrorCode.UnknownTable, `Table ${project}.${table} does not exist`);
      return { schema: await ensureProjectViews(project, c), table: t };
    }
    if (db === 'files') {
      const file = await lookup.isFile(table);
      if (!file)
        throw new SqlError(
          SqlErrorCode.UnknownTable,
          `Table files.${table} does not exist: no file with that name was uploaded`,
        );
      return { schema: FILES_SCHEMA, table: file };
    }
    const integration = await lookup.isIntegration(database);
    if (integration)
      throw new SqlError(
        SqlErrorCode.UnknownTable,
        `Table ${integration}.${table} cannot be read: querying external databases is not available in this version`,
      );
    throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${database} does not exist`);
  };

  /**
   * A project's object (model, agent, knowledge base, view) that `database.table` names: `find`
   * asked with the project's canonical name, never for a name the project's own tables have.
   */
  const projectObject = async <T>(
    database: string,
    table: string,
    find: (project: string) => Promise<T | undefined>,
  ): Promise<T | undefined> => {
    const project = await lookup.isProject(database);
    if (!project || tables.PROJECT_TABLES.some((t) => t === table.toLowerCase())) return undefined;
    return find(project);
  };

  return {
    resolve,
    asOf,
    integration: (name: string) => lookup.isIntegration(name),
    /** The project's canonical name when `database.table` names one of its models. */
    model: (database: string, table: string) =>
      projectObject(database, table, async (project) =>
        (await lookup.isModel(project, table)) ? project : undefined,
      ),
    /** The project's and agent's canonical names when `database.table` names an agent. */
    agent: (database: string, table: string) =>
      projectObject(database, table, async (project) => {
        const agent = await lookup.isAgent(project, table);
        return agent === undefined ? undefined : { project, agent };
      }),
    /** The project's and knowledge base's canonical names when `database.table` names a knowledge base. */
    knowledgeBase: (database: string, table: string) =>
      projectObject(database, table, async (project) => {
        const name = await lookup.isKnowledgeBase(project, table);
        return name === undefined ? undefined : { project, name };
      }),
    /** The view `database.table` names, with its project's canonical name and its query. */
    view: (database: string, table: string) =>
      projectObject(database, table, async (project) => {
        const query = await lookup.viewQuery(project, table);
        return query === undefined ? undefined : { project, query };
      }),
  };
};

export type CatalogResolver = ReturnType<typeof catalogResolver>;
