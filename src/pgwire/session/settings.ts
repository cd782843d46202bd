/**
 * A connection's run-time parameters: what the server reports at startup (ParameterStatus), what
 * SHOW answers and SET changes. The values describe what this server actually sends: text output in
 * ISO dates, UTF-8, standard strings, timestamps with time zone printed in UTC (`+00`).
 */

/** Reported at startup and again whenever SET changes them, as PostgreSQL does (GUC_REPORT). */
export const REPORTED = [
  'server_version',
  'server_encoding',
  'client_encoding',
  'application_name',
  'DateStyle',
  'IntervalStyle',
  'TimeZone',
  'integer_datetimes',
  'standard_conforming_strings',
  'is_superuser',
  'session_authorization',
  'default_transaction_read_only',
  'in_hot_standby',
  'search_path',
] as const;

/** Server version as clients read it (libpq and drivers parse `major.minor`). */
export const PG_SERVER_VERSION = '16.0';

type SettingsFacts = {
  user: string;
  applicationName: string;
  superuser: boolean;
  serverVersion: string;
};

/** A value SET was refused for: the client is told which and why. */
export class SettingRefused extends Error {
  constructor(
    readonly sqlState: string,
    message: string,
  ) {
    super(message);
    this.name = 'SettingRefused';
  }
}

const ENCODINGS: Record<string, string> = {
  UTF8: 'UTF8',
  'UTF-8': 'UTF8',
  UNICODE: 'UTF8',
  SQL_ASCII: 'SQL_ASCII',
};

/** Parameter names are case-insensitive; this keeps PostgreSQL's spelling for those it reports. */
const CANONICAL = new Map<string, string>(REPORTED.map((name) => [name.toLowerCase(), name]));

export class Settings {
  private readonly values = new Map<string, string>();
  private readonly defaults: Map<string, string>;

  constructor(facts: SettingsFacts) {
    this.defaults = new Map([
      ['server_version', facts.serverVersion],
      ['server_version_num', String(Number(facts.serverVersion.split('.')[0]) * 10000)],
      ['server_encoding', 'UTF8'],
      ['client_encoding', 'UTF8'],
      ['application_name', facts.applicationName],
      ['DateStyle', 'ISO, MDY'],
      ['IntervalStyle', 'postgres'],
      ['TimeZone', 'UTC'],
      ['integer_datetimes', 'on'],
      ['standard_conforming_strings', 'on'],
      ['is_superuser', facts.superuser ? 'on' : 'off'],
      ['session_authorization', facts.user],
      ['default_transaction_read_only', 'off'],
      ['in_hot_standby', 'off'],
      ['search_path', '"$user", public'],
      ['transaction_isolation', 'read committed'],
      ['default_transaction_isolation', 'read committed'],
      ['transaction_read_only', 'off'],
      ['max_identifier_length', '63'],
      ['extra_float_digits', '1'],
      ['lc_collate', 'C'],
      ['lc_ctype', 'C'],
      ['bytea_output', 'hex'],
      ['statement_timeout', '0'],
      ['lock_timeout', '0'],
      ['idle_in_transaction_session_timeout', '0'],
    ]);
  }

  /** The stored spelling of a parameter name, or undefined if this server does not know it. */
  nameOf(name: string): string | undefined {
    const lower = name.toLowerCase();
    const canonical = CANONICAL.get(lower) ?? lower;
    return this.defaults.has(canonical) || this.values.has(canonical) ? canonical : undefined;
  }

  get(name: string): string | undefined {
    const key = this.nameOf(name);
    return key === undefined ? undefined : (this.values.get(key) ?? this.defaults.get(key));
  }

  all(): [string, string][] {
    const names = new Set([...this.defaults.keys(), ...this.values.keys()]);
    return [...names].sort().map((n) => [n, this.get(n)!]);
  }

  /**
   * Sets a parameter (null: back to its default) and says whether clients must be told (a reported
   * one). Parameters this server does not know are kept as given (drivers set a few harmless ones);
   * values it cannot honour are refused.
   */
  set(name: string, value: string | null): { reported: boolean; name: string } {
    const lower = name.toLowerCase();
    const key = CANONICAL.get(lower) ?? lower;
    if (value === null) this.values.delete(key);
    else this.values.set(key, checked(key, value));
    return { reported: (REPORTED as readonly string[]).includes(key), name: key };
  }

  /**
   * A value given at connection (the startup packet, `options=-c …`): the session's default, which
   * RESET and DISCARD ALL go back to, as in PostgreSQL.
   */
  setDefault(name: string, value: string) {
    const lower = name.toLowerCase();
    const key = CANONICAL.get(lower) ?? lower;
    this.defaults.set(key, checked(key, value));
  }

  /** Every parameter back to its session default; the reported ones whose value changed, with their new value. */
  resetAll(): [string, string][] {
    const changed: [string, string][] = [];
    for (const key of [...this.values.keys()]) {
      const before = this.get(key);
      this.values.delete(key);
      const after = this.get(key);
      if ((REPORTED as readonly string[]).includes(key) && after !== undefined && after !== before)
        changed.push([key, after]);
    }
    return changed;
  }
}

const checked = (name: string, value: string): string => {
  switch (name) {
    case 'client_encoding': {
      const encoding = ENCODINGS[value.toUpperCase()];
      if (!encoding)
        throw new SettingRefused(
          '22023',
          `client_encoding ${value} is not supported: this server sends UTF8 (or SQL_ASCII)`,
        );
      return encoding;
    }
    case 'DateStyle':
      if (!/^\s*ISO\b/i.test(value) && !/^\s*(MDY|DMY|YMD)\s*$/i.test(value))
        throw new SettingRefused('0A000', `DateStyle ${value} is not supported: dates are sent in ISO form`);
      return 'ISO, MDY';
    case 'IntervalStyle':
      if (value.toLowerCase() !== 'postgres')
        throw new SettingRefused(
          '0A000',
          `IntervalStyle ${value} is not supported: intervals are sent in postgres style`,
        );
      return 'postgres';
    case 'standard_conforming_strings':
      if (!/^(on|true|1)$/i.test(value))
        throw new SettingRefused(
          '0A000',
          'standard_conforming_strings cannot be turned off: backslashes in strings are characters',
        );
      return 'on';
    case 'server_version':
    case 'server_encoding':
    case 'integer_datetimes':
    case 'is_superuser':
    case 'in_hot_standby':
    case 'max_identifier_length':
      throw new SettingRefused('55P02', `parameter "${name}" cannot be changed`);
    default:
      return value;
  }
};
