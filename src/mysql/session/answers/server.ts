import { table, type Outcome } from '../../outcome';
import type { Statement } from '../statement';
import type { VariableValue } from '../variables';
import { CHARSET_COLUMNS, CHARSETS, COLLATION_COLUMNS, COLLATIONS } from '../../../shared/mysqlCharsets';
import type { SessionView } from '../view';
import { filtered } from './filters';

/**
 * What the server is made of, as MariaDB (10.11) answers it: its character sets and collations
 * (src/shared/mysqlCharsets.ts), plugins and an account's grants, in MariaDB's columns. Tools ask
 * on connect (DBeaver: SHOW PLUGINS, SHOW GRANTS, SHOW COLLATION LIKE 'utf8mb4_general_ci').
 */

/** The plugins that are this server: its two authentication plugins and its one storage engine (SHOW ENGINES). */
const PLUGIN_COLUMNS = ['Name', 'Status', 'Type', 'Library', 'License'];
const PLUGINS: VariableValue[][] = [
  ['mysql_native_password', 'ACTIVE', 'AUTHENTICATION', null, 'GPL'],
  ['caching_sha2_password', 'ACTIVE', 'AUTHENTICATION', null, 'GPL'],
  ['InnoDB', 'ACTIVE', 'STORAGE ENGINE', null, 'GPL'],
];

/** MariaDB types the numbers LONGLONG; the rest is text. */
const typesOf = (columns: string[], numeric: string[]) =>
  columns.map((c) => (numeric.includes(c) ? 'BIGINT' : 'VARCHAR'));

type Filter = { like: string | undefined; where: string | undefined };

const listed = async (
  session: Pick<SessionView, 'query'>,
  columns: string[],
  numeric: string[],
  all: VariableValue[][],
  filter: Filter,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const rows = await filtered(session, columns, all, filter, signal);
  return Array.isArray(rows) ? table(columns, typesOf(columns, numeric), rows) : rows;
};

export const showCollation = (
  session: Pick<SessionView, 'query'>,
  s: Extract<Statement, { kind: 'showCollation' }>,
  signal?: AbortSignal,
) => listed(session, COLLATION_COLUMNS, ['Id', 'Sortlen'], COLLATIONS, s, signal);

export const showCharset = (
  session: Pick<SessionView, 'query'>,
  s: Extract<Statement, { kind: 'showCharset' }>,
  signal?: AbortSignal,
) => listed(session, CHARSET_COLUMNS, ['Maxlen'], CHARSETS, s, signal);

export const showPlugins = (): Outcome => table(PLUGIN_COLUMNS, typesOf(PLUGIN_COLUMNS, []), PLUGINS);

/**
 * SHOW GRANTS [FOR account]: MariaDB's one column, named for the account (the connection's own is
 * `user@%`, as CURRENT_USER() says), and no rows. What a user may do is the role the service gives
 * them (docs/security.md, "Sign-in and roles"), checked on every statement; no MySQL grant exists to list,
 * and a made-up one (ALL PRIVILEGES, or USAGE: none) would tell a tool something untrue.
 */
export const showGrants = (
  session: Pick<SessionView, 'valueOf'>,
  s: Extract<Statement, { kind: 'showGrants' }>,
): Outcome => {
  const account = s.account
    ? `${s.account.user}@${s.account.host}`
    : String(session.valueOf({ kind: 'function', name: 'CURRENT_USER' })?.value ?? '');
  return table([`Grants for ${account}`], ['VARCHAR'], []);
};
