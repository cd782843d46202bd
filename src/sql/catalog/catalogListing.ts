import type { DuckDBConnection } from '@duckdb/node-api';
import type { ExternalDatabase, ExternalResult } from '../../integrations/drivers';
import { quoteString } from '../../shared/quoting';
import { conjunctsOf, nodeAt, nodesAt, serializedConstantOf, stringsAt, type AstNode } from '../pipeline/ast';
import type { ExternalFetch } from '../faces/integration/federation';

/**
 * The one catalog: every relation a SQL caller can name (its database, its name, its kind) and its
 * columns with their DuckDB types, as `SELECT *` of it answers them. information_schema.TABLES and
 * information_schema.COLUMNS are its two faces (one row per relation, one per column), built here
 * from one list of kinds (`RELATION_KINDS`); every other path lists relations by reading them:
 * SHOW [FULL] TABLES, SHOW COLUMNS and DESCRIBE of a table (src/sql/catalog/introspection.ts, the MySQL
 * door's src/mysql/session/answers/tables.ts), the PostgreSQL door's catalog shadow
 * (src/pgwire/catalog/listing.ts: `\dt`, `\dv`, `\d`), and MCP's list_tables and describe_table.
 *
 * A project-scoped caller reads the same two views over its project's rows (src/sql/catalog/catalog.ts,
 * scopedBody). External databases' tables are not in the read model: a query reading TABLES or
 * COLUMNS fetches each registered database's column listing and adds its rows (`externalListings`),
 * typed as the driver types what a SELECT of the table answers (`externalDuckType`).
 */

/** TABLE_TYPE of each kind of relation (MindsDB's: a model is a MODEL). */
const TABLE_TYPE = {
  system: 'SYSTEM VIEW',
  table: 'BASE TABLE',
  view: 'VIEW',
  model: 'MODEL',
} as const;

/** Where the catalog's sources live, as src/sql/catalog/catalog.ts names them. */
type CatalogNames = {
  /** The schema of information_schema's views in DuckDB. */
  informationSchema: string;
  /** The table of learnt columns (views, knowledge bases, models), by KIND and ID. */
  objectColumns: string;
  /** information_schema's tables, as listed (TABLES and COLUMNS among them). */
  systemTables: readonly string[];
  /** Every project's tables and the information_schema view each reads. */
  projectTables: readonly (readonly [table: string, source: string])[];
};

/**
 * One kind of relation: the SELECT of its relations (TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE) and the
 * SELECT of their columns (TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE,
 * IS_NULLABLE). A new table-like kind is one more entry: every path lists it from then on.
 */
type RelationKind = { kind: string; relations: string; columns: string };

/** The models a project lists: one row per model name, its active version (else its latest). */
export const LISTED_MODELS = `(SELECT * FROM main.models
    QUALIFY row_number() OVER (PARTITION BY lower(PROJECT), lower(NAME) ORDER BY ACTIVE DESC, VERSION DESC) = 1)`;

const RELATION_KINDS = (n: CatalogNames): RelationKind[] => {
  const values = (rows: string[]) => rows.join(', ');
  const q = quoteString;
  return [
    {
      kind: 'information_schema',
      relations: `SELECT 'information_schema', t, '${TABLE_TYPE.system}'
        FROM (VALUES ${values(n.systemTables.map((t) => `(${q(t)})`))}) v(t)`,
      columns: `SELECT 'information_schema', c.table_name, c.column_name, CAST(c.ordinal_position AS BIGINT), c.data_type, c.is_nullable
        FROM information_schema.columns c WHERE c.table_schema = '${n.informationSchema}'`,
    },
    {
      kind: 'project table',
      relations: `SELECT p.name, t.t, '${TABLE_TYPE.table}' FROM (SELECT name, id FROM main.projects) p
        CROSS JOIN (VALUES ${values(n.projectTables.map(([t]) => `(${q(t)})`))}) t(t)`,
      columns: `SELECT p.name, t.t, c.column_name, CAST(c.ordinal_position AS BIGINT), c.data_type, c.is_nullable
        FROM (SELECT name FROM main.projects) p
        CROSS JOIN (VALUES ${values(n.projectTables.map(([t, s]) => `(${q(t)}, ${q(s)})`))}) t(t, s)
        JOIN information_schema.columns c ON c.table_schema = '${n.informationSchema}' AND c.table_name = t.s`,
    },
    {
      kind: 'knowledge base',
      relations: `SELECT PROJECT, NAME, '${TABLE_TYPE.table}' FROM (SELECT PROJECT, NAME FROM main.knowledge_bases ORDER BY ID)`,
      columns: `SELECT k.PROJECT, k.NAME, o.COLUMN_NAME, o.ORDINAL_POSITION, o.DATA_TYPE, 'YES'
        FROM main.knowledge_bases k JOIN ${n.objectColumns} o ON o.KIND = 'knowledge_base' AND o.ID = k.ID`,
    },
    {
      kind: 'view',
      relations: `SELECT PROJECT, NAME, '${TABLE_TYPE.view}' FROM (SELECT PROJECT, NAME FROM main.views ORDER BY ID)`,
      columns: `SELECT v.PROJECT, v.NAME, o.COLUMN_NAME, o.ORDINAL_POSITION, o.DATA_TYPE, 'YES'
        FROM main.views v JOIN ${n.objectColumns} o ON o.KIND = 'view' AND o.ID = v.ID`,
    },
    {
      kind: 'model',
      relations: `SELECT PROJECT, NAME, '${TABLE_TYPE.model}' FROM (SELECT PROJECT, NAME FROM ${LISTED_MODELS} ORDER BY ID)`,
      columns: `SELECT m.PROJECT, m.NAME, o.COLUMN_NAME, o.ORDINAL_POSITION, o.DATA_TYPE, 'YES'
        FROM ${LISTED_MODELS} m JOIN ${n.objectColumns} o ON o.KIND = 'model' AND o.ID = m.ID`,
    },
    {
      kind: 'file',
      relations: `SELECT 'files', NAME, '${TABLE_TYPE.table}' FROM main.files`,
      columns: `SELECT 'files', f.NAME, c.column_name, CAST(c.ordinal_position AS BIGINT), c.data_type, c.is_nullable
        FROM main.files f JOIN information_schema.columns c ON c.table_schema = 'mdb_files' AND c.table_name = f.KEY`,
    },
  ];
};

/** The bodies of information_schema.TABLES and COLUMNS (the read model's relations; external ones are added per query). */
export const catalogListingViews = (n: CatalogNames): { TABLES: string; COLUMNS: string } => {
  const kinds = RELATION_KINDS(n);
  return {
    TABLES: `SELECT 'def' AS TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM (
      ${kinds.map((k) => k.relations).join('\n      UNION ALL ')}) r(TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE)`,
    COLUMNS: `SELECT 'def' AS TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, IS_NULLABLE FROM (
      ${kinds.map((k) => k.columns).join('\n      UNION ALL ')}) c(TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, IS_NULLABLE)`,
  };
};

/** The catalog's two faces, by the name a query reads them by (information_schema.<name>). */
const CATALOG_FACES = ['TABLES', 'COLUMNS'] as const;
export type CatalogFace = (typeof CATALOG_FACES)[number];
export const catalogFaceOf = (table: string): CatalogFace | undefined =>
  CATALOG_FACES.find((f) => f === table.toUpperCase());

/**
 * The DuckDB type a column of an external database reads as (what `SELECT *` of its table answers),
 * from the database's own name of its type (information_schema.columns.data_type). The drivers type
 * answers by their wire types (src/integrations/drivers.ts, PG_TYPES and MYSQL_TYPES); these are
 * the same mappings by name. Anything else arrives as text.
 */
const POSTGRES_TYPES: Record<string, string> = {
  boolean: 'BOOLEAN',
  smallint: 'BIGINT',
  integer: 'BIGINT',
  bigint: 'BIGINT',
  real: 'DOUBLE',
  'double precision': 'DOUBLE',
  numeric: 'DOUBLE',
  date: 'DATE',
  'timestamp without time zone': 'TIMESTAMP',
  'timestamp with time zone': 'TIMESTAMP',
};
const MYSQL_TYPES: Record<string, string> = {
  tinyint: 'BIGINT',
  smallint: 'BIGINT',
  mediumint: 'BIGINT',
  int: 'BIGINT',
  integer: 'BIGINT',
  bigint: 'BIGINT',
  float: 'DOUBLE',
  double: 'DOUBLE',
  'double precision': 'DOUBLE',
  real: 'DOUBLE',
  decimal: 'DOUBLE',
  numeric: 'DOUBLE',
  date: 'DATE',
  datetime: 'TIMESTAMP',
  timestamp: 'TIMESTAMP',
  bit: 'BOOLEAN',
};
const externalDuckType = (engine: string, dataType: string): string =>
  (engine.toLowerCase() === 'postgres' ? POSTGRES_TYPES : MYSQL_TYPES)[dataType.trim().toLowerCase()] ??
  'VARCHAR';

/** One external database's relations and columns, typed as the engine reads them (in order). */
type ExternalRelations = { table: string; columns: { name: string; type: string }[] }[];

/** A database's column listing with DATA_TYPE as the engine's type (`externalDuckType`). */
const typedListing = (engine: string, listing: ExternalResult): ExternalResult => {
  const at = listing.columns.findIndex((c) => c.name === 'DATA_TYPE');
  return {
    columns: listing.columns,
    rows: listing.rows.map((r) => r.map((v, i) => (i === at ? externalDuckType(engine, String(v)) : v))),
  };
};

/** An external database's relations with their columns: what TABLES and COLUMNS list of it. */
export const externalRelations = async (db: ExternalDatabase): Promise<ExternalRelations> => {
  const listing = typedListing(db.engine, await db.listColumns());
  const at = (name: string) => listing.columns.findIndex((c) => c.name === name);
  const [table, column, type] = [at('TABLE_NAME'), at('COLUMN_NAME'), at('DATA_TYPE')];
  const relations = new Map<string, ExternalRelations[number]>();
  for (const r of listing.rows) {
    const name = String(r[table]);
    const relation = relations.get(name) ?? { table: name, columns: [] };
    relations.set(name, relation);
    relation.columns.push({ name: String(r[column]), type: String(r[type]) });
  }
  return [...relations.values()];
};

/** The lower-case names a WHERE holds TABLE_SCHEMA to (`TABLE_SCHEMA = 'x'`, `lower(TABLE_SCHEMA) = 'x'`, IN), if it does. */
const schemasNamed = (where: AstNode | undefined): Set<string> | undefined => {
  const conjuncts = conjunctsOf(where);
  const isSchemaColumn = (n: AstNode | undefined): boolean => {
    if (!n) return false;
    if (n.class === 'COLUMN_REF')
      return stringsAt(n, 'column_names').at(-1)?.toUpperCase() === 'TABLE_SCHEMA';
    if (n.class === 'FUNCTION' && ['lower', 'upper'].includes(String(n.function_name).toLowerCase())) {
      const args = nodesAt(n, 'children');
      return args.length === 1 && isSchemaColumn(args[0]);
    }
    return false;
  };
  const text = (n: AstNode | undefined): string | undefined => {
    if (n?.class !== 'CONSTANT') return undefined;
    const v = serializedConstantOf(n);
    return !v.is_null && typeof v.value === 'string' ? v.value.toLowerCase() : undefined;
  };
  for (const c of conjuncts) {
    if (c.class === 'COMPARISON' && c.type === 'COMPARE_EQUAL') {
      const [l, r] = [nodeAt(c, 'left'), nodeAt(c, 'right')];
      const value = isSchemaColumn(l) ? text(r) : isSchemaColumn(r) ? text(l) : undefined;
      if (value !== undefined) return new Set([value]);
    }
    if (c.class === 'OPERATOR' && c.type === 'COMPARE_IN') {
      const [column, ...items] = nodesAt(c, 'children');
      const values = items.map(text);
      if (isSchemaColumn(column) && values.every((v): v is string => v !== undefined)) return new Set(values);
    }
  }
  return undefined;
};

/**
 * TABLES and COLUMNS read with every registered external database's relations (as MindsDB lists
 * them, so SQL tools browse their tables): each database's column listing is fetched once, then one
 * temporary table per face holds the read model's rows and theirs, and the references read it. A
 * database that cannot be reached lists nothing. When the query's only table is one face, held to
 * named schemas (`WHERE TABLE_SCHEMA = 'x'`), only those databases are asked. Undefined when no
 * external database is to be asked (the views alone answer).
 */
export const externalListings = async (
  c: DuckDBConnection,
  references: readonly { node: AstNode; face: CatalogFace }[],
  statement: AstNode,
): Promise<{ fetches: ExternalFetch[]; assemble: { temp: string; sql: string }[] } | undefined> => {
  let registered = (await c.runAndReadAll('SELECT name FROM main.databases ORDER BY id'))
    .getRows()
    .map((r) => String(r[0]));
  const top = nodeAt(statement, 'node');
  if (references.length === 1 && top?.from_table === references[0]!.node) {
    const named = schemasNamed(nodeAt(top, 'where_clause'));
    if (named) registered = registered.filter((name) => named.has(name.toLowerCase()));
  }
  if (registered.length === 0) return undefined;
  const fetches: ExternalFetch[] = registered.map((integration, i) => ({
    temp: `__mindledger_listing_${i}`,
    integration,
    sql: '',
    read: async (db) => typedListing(db.engine, await db.listColumns()),
    unreachable: {
      columns: ['TABLE_NAME', 'COLUMN_NAME', 'ORDINAL_POSITION', 'DATA_TYPE', 'IS_NULLABLE'].map((name) => ({
        name,
        type: name === 'ORDINAL_POSITION' ? 'BIGINT' : 'VARCHAR',
      })),
      rows: [],
    },
  }));
  const assemble: { temp: string; sql: string }[] = [];
  for (const face of CATALOG_FACES) {
    const nodes = references.filter((r) => r.face === face).map((r) => r.node);
    if (nodes.length === 0) continue;
    const temp = `__mindledger_${face.toLowerCase()}`;
    const physical = `${String(nodes[0]!.schema_name)}."${String(nodes[0]!.table_name)}"`;
    for (const n of nodes) {
      n.schema_name = '';
      n.table_name = temp;
    }
    const theirs = fetches.map((f, i) =>
      face === 'TABLES'
        ? `SELECT 'def', ${quoteString(registered[i]!)}, TABLE_NAME, '${TABLE_TYPE.table}'
             FROM "${f.temp}" GROUP BY TABLE_NAME ORDER BY TABLE_NAME`
        : `SELECT 'def', ${quoteString(registered[i]!)}, TABLE_NAME, COLUMN_NAME, CAST(ORDINAL_POSITION AS BIGINT), DATA_TYPE, IS_NULLABLE FROM "${f.temp}"`,
    );
    const ours =
      face === 'TABLES'
        ? `SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM ${physical}`
        : `SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, CAST(ORDINAL_POSITION AS BIGINT) AS ORDINAL_POSITION, DATA_TYPE, IS_NULLABLE FROM ${physical}`;
    assemble.push({ temp, sql: [ours, ...theirs.map((t) => `(${t})`)].join(' UNION ALL ') });
  }
  return { fetches, assemble };
};
