/**
 * Quoting, one helper per dialect and kind, named for what they produce. DuckDB (our read model)
 * and PostgreSQL quote identifiers with double quotes; MySQL and MariaDB with backticks; all of
 * them quote strings with single quotes, a quote inside doubled.
 */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** A `schema.table` name (or a bare one), each part quoted. */
export const quoteQualifiedIdent = (name: string) => name.split('.').map(quoteIdent).join('.');
export const quoteMysqlIdent = (name: string) => `\`${name.replace(/`/g, '``')}\``;
/** A `db.table` name (or a bare one) in MySQL's dialect, each part quoted. */
export const quoteQualifiedMysqlIdent = (name: string) => name.split('.').map(quoteMysqlIdent).join('.');
export const quoteString = (value: string) => `'${value.replace(/'/g, "''")}'`;
