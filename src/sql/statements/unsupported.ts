import { SqlError, SqlErrorCode } from '../errors';

/**
 * Statements MySQL (or DuckDB) has and this server does not run, each refused with its own name
 * and the reason, instead of a parse error or a refusal that blames the tables. The longest
 * matching head wins (`CREATE UNIQUE INDEX` before `CREATE`). Writes into tables (CREATE TABLE,
 * INSERT, UPDATE, DELETE, DROP TABLE) are decided where they are run: integrations take them.
 */
const REASONS: [head: string, why: string][] = [
  ['CREATE INDEX', 'the read model indexes its own tables; external databases index theirs'],
  ['CREATE UNIQUE INDEX', 'the read model indexes its own tables; external databases index theirs'],
  ['DROP INDEX', 'the read model indexes its own tables; external databases index theirs'],
  ['ALTER TABLE', "the tables are projections of the event log; their columns follow the log's events"],
  ['RENAME TABLE', 'the tables are projections of the event log and are named by it'],
  ['TRUNCATE', 'the tables are projections of the event log and change only through commands'],
  ['LOCK TABLES', 'each statement reads one consistent version of the read model; there is nothing to lock'],
  [
    'UNLOCK TABLES',
    'each statement reads one consistent version of the read model; there is nothing to lock',
  ],
  ['CREATE FUNCTION', 'user-defined functions are not part of MindsDB SQL'],
  ['CREATE PROCEDURE', 'stored procedures are not part of MindsDB SQL'],
  ['CREATE MACRO', 'user-defined functions are not part of MindsDB SQL'],
  ['CREATE SEQUENCE', 'the tables are projections of the event log and change only through commands'],
  ['CREATE TYPE', 'the tables are projections of the event log and change only through commands'],
  ['CREATE USER', 'users are managed with `npm run user` and /api/users'],
  ['DROP USER', 'users are managed with `npm run user` and /api/users'],
  ['ALTER USER', 'users are managed with `npm run user` and /api/users'],
  ['GRANT', 'roles are given with `npm run user` and /api/users'],
  ['REVOKE', 'roles are given with `npm run user` and /api/users'],
  ['EXPLAIN', 'query plans of the read model are not shown to clients'],
  ['ANALYZE', 'statistics of the read model are kept by the server'],
  ['SUMMARIZE', 'use SELECT with aggregates'],
  ['COPY', 'files come in through POST /api/files and leave through SELECT'],
  ['EXPORT', 'files come in through POST /api/files and leave through SELECT'],
  ['IMPORT', 'files come in through POST /api/files and leave through SELECT'],
  ['ATTACH', 'external databases are registered with CREATE DATABASE'],
  ['DETACH', 'external databases are removed with DROP DATABASE'],
  ['INSTALL', 'the server loads no extensions at run time'],
  ['LOAD', 'the server loads no extensions at run time'],
  ['PRAGMA', "the read model's settings are the server's"],
  ['CALL', 'stored procedures are not part of MindsDB SQL'],
  ['CHECKPOINT', 'the read model is checkpointed by the server'],
  ['FORCE', 'the read model is checkpointed by the server'],
  ['VACUUM', 'the read model is maintained by the server'],
  ['COMMENT', 'the tables are projections of the event log and change only through commands'],
  ['PREPARE', 'send parameters with the request (params) or use the MySQL protocol'],
  ['EXECUTE', 'send parameters with the request (params) or use the MySQL protocol'],
  ['DEALLOCATE', 'send parameters with the request (params) or use the MySQL protocol'],
  ['RESET', "the read model's settings are the server's"],
  ['MERGE', 'the tables are projections of the event log and change only through commands'],
  [
    'BEGIN',
    'every statement commits on its own (over the MySQL protocol, transactions are accepted as no-ops)',
  ],
  [
    'START TRANSACTION',
    'every statement commits on its own (over the MySQL protocol, transactions are accepted as no-ops)',
  ],
  [
    'COMMIT',
    'every statement commits on its own (over the MySQL protocol, transactions are accepted as no-ops)',
  ],
  [
    'ROLLBACK',
    'every statement commits on its own (over the MySQL protocol, transactions are accepted as no-ops)',
  ],
  ['ABORT', 'every statement commits on its own'],
  ['HANDLER', 'read tables with SELECT'],
  ['FLUSH', 'the read model is maintained by the server'],
  ['OPTIMIZE', 'the read model is maintained by the server'],
  ['REPAIR', 'the read model is maintained by the server'],
  ['CHECK', 'the read model is checked with `npm run replay -- --check` and the log with `npm run verify`'],
];

const byLength = [...REASONS].sort((a, b) => b[0].length - a[0].length);

/** The first words of a statement, upper case, one blank between them (comments already trimmed). */
const headOf = (sql: string) =>
  sql
    .trimStart()
    .slice(0, 60)
    .split(/[\s(;]+/)
    .slice(0, 3)
    .join(' ')
    .toUpperCase();

/** CREATE INDEX heads this server runs: MindsDB's on a knowledge base (src/knowledgeBases/sql.ts). */
const RUN_HERE = /^\s*CREATE\s+INDEX\s+ON\s+KNOWLEDGE(?:\s*_\s*|\s+)BASE\b/i;

/** The refusal of a statement this server does not run, naming it; undefined for any other. */
export const unsupportedStatement = (sql: string): SqlError | undefined => {
  if (RUN_HERE.test(sql)) return undefined;
  const head = headOf(sql);
  const known = byLength.find(([h]) => head === h || head.startsWith(`${h} `));
  if (!known) return undefined;
  return new SqlError(SqlErrorCode.Forbidden, `${known[0]} is not supported: ${known[1]}`);
};
