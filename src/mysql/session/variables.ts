import { ownEntry } from '../../shared/ownEntry';

/** MySQL system variables as a connection reads them (`@@x`, SHOW VARIABLES) and sets them (SET). */

export type VariableValue = string | number | null;

export type ServerFacts = {
  serverVersion: string;
  versionComment: string;
  port: number;
  hostname: string;
  tls: boolean;
  defaultAuthPlugin: string;
  maxAllowedPacket: number;
};

/**
 * What a MySQL 8 server answers for the variables drivers and tools read when they connect
 * (Connector/J, mysql2, PyMySQL, the mysql CLI, DBeaver, Metabase). Numbers are numbers (MySQL
 * types them BIGINT), the rest strings.
 */
export const serverVariables = (f: ServerFacts): ReadonlyMap<string, VariableValue> =>
  new Map<string, VariableValue>([
    ['auto_increment_increment', 1],
    ['auto_increment_offset', 1],
    ['autocommit', 1],
    ['character_set_client', 'utf8mb4'],
    ['character_set_connection', 'utf8mb4'],
    ['character_set_database', 'utf8mb4'],
    ['character_set_filesystem', 'binary'],
    ['character_set_results', 'utf8mb4'],
    ['character_set_server', 'utf8mb4'],
    ['character_set_system', 'utf8mb3'],
    ['collation_connection', 'utf8mb4_general_ci'],
    ['collation_database', 'utf8mb4_general_ci'],
    ['collation_server', 'utf8mb4_general_ci'],
    ['default_authentication_plugin', f.defaultAuthPlugin],
    ['default_storage_engine', 'InnoDB'],
    ['div_precision_increment', 4],
    ['foreign_key_checks', 1],
    ['have_ssl', f.tls ? 'YES' : 'DISABLED'],
    ['have_openssl', f.tls ? 'YES' : 'DISABLED'],
    ['hostname', f.hostname],
    ['init_connect', ''],
    ['interactive_timeout', 28800],
    ['license', 'GPL'],
    ['lower_case_table_names', 1],
    ['max_allowed_packet', f.maxAllowedPacket],
    ['max_execution_time', 0],
    ['net_buffer_length', 16384],
    ['net_read_timeout', 30],
    ['net_write_timeout', 60],
    ['performance_schema', 0],
    ['port', f.port],
    ['protocol_version', 10],
    ['query_cache_size', 0],
    ['query_cache_type', 'OFF'],
    ['read_only', 0],
    ['require_secure_transport', 'OFF'],
    ['session_track_schema', 'ON'],
    ['sql_auto_is_null', 0],
    ['sql_mode', 'ANSI_QUOTES'],
    ['sql_safe_updates', 0],
    ['sql_select_limit', '18446744073709551615'],
    ['system_time_zone', 'UTC'],
    ['time_zone', 'SYSTEM'],
    ['transaction_isolation', 'REPEATABLE-READ'],
    ['transaction_read_only', 0],
    ['unique_checks', 1],
    ['version', f.serverVersion],
    ['version_comment', f.versionComment],
    ['version_compile_machine', 'x86_64'],
    ['version_compile_os', 'Linux'],
    ['wait_timeout', 28800],
  ]);

/** Old names MySQL still answers to. */
const ALIASES: Record<string, string> = {
  tx_isolation: 'transaction_isolation',
  tx_read_only: 'transaction_read_only',
  character_set: 'character_set_client',
};

/** `@@session.x`, `@@GLOBAL.x`, `session x`, `x` → `x` (lower case, aliases resolved). */
const variableName = (raw: string) => {
  const bare = raw
    .replace(/^@@/, '')
    .replace(/^(global|session|local|persist|persist_only)\./i, '')
    .toLowerCase();
  return ownEntry(ALIASES, bare) ?? bare;
};

const BOOLEAN_WORDS: Record<string, number> = { on: 1, true: 1, off: 0, false: 0 };

/**
 * A connection's variables: the server's, what SET changed on this connection, and the few MySQL
 * computes (warning_count, error_count, the connection's id).
 */
export class SessionVariables {
  private readonly changed = new Map<string, VariableValue>();

  constructor(
    private readonly server: ReadonlyMap<string, VariableValue>,
    private readonly computed: () => Record<string, VariableValue>,
  ) {}

  get(raw: string): { found: true; value: VariableValue } | { found: false } {
    const name = variableName(raw);
    const computed = this.computed();
    if (name in computed) return { found: true, value: computed[name]! };
    if (this.changed.has(name)) return { found: true, value: this.changed.get(name)! };
    if (this.server.has(name)) return { found: true, value: this.server.get(name)! };
    return { found: false };
  }

  /** SET x = value; DEFAULT (undefined) goes back to the server's value. Booleans set as ON/OFF read as 1/0. */
  set(raw: string, value: VariableValue | undefined) {
    const name = variableName(raw);
    if (value === undefined) {
      this.changed.delete(name);
      return;
    }
    const current = this.server.get(name);
    const word = typeof value === 'string' ? ownEntry(BOOLEAN_WORDS, value.toLowerCase()) : undefined;
    this.changed.set(name, typeof current === 'number' && word !== undefined ? word : value);
  }

  reset() {
    this.changed.clear();
  }

  /** Every variable, sorted by name, as SHOW VARIABLES lists them. */
  all(): [string, VariableValue][] {
    const names = new Set([...this.server.keys(), ...this.changed.keys(), ...Object.keys(this.computed())]);
    return [...names].sort().map((n) => {
      const v = this.get(n);
      return [n, v.found ? v.value : null];
    });
  }
}
