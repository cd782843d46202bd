import type { Predictions } from './pipeline/plan';

/**
 * What the SQL core needs of the capabilities, in its own terms. It names no capability, not even
 * a type: the composition root (src/wiring/sqlPorts.ts) adapts the services to these shapes, as it
 * hands the slices' statements over (src/sql/slicePorts.ts). So src/sql and the capabilities do not
 * import each other, and a capability's service can change its own signatures without src/sql.
 */
export type SqlPorts = {
  /** What FROM and the SQL functions evaluate: models, agents, knowledge bases, LLMs, documents. */
  readonly predictions: Predictions;
  readonly projectExists: (name: string) => Promise<boolean>;
  /** A project or an integration of that name. */
  readonly databaseExists: (name: string) => Promise<boolean>;
  /** DESCRIBE of a model (and whether a dotted name is one). */
  readonly models: {
    exists(project: string, ref: string): Promise<boolean>;
    describe(project: string, ref: string, attribute?: string): Promise<unknown>;
  };
  /** A write sent to an integration, recorded on the log once it is done. */
  readonly recordIntegrationWrite: (write: IntegrationWriteRecord) => Promise<unknown>;
  /** CREATE TABLE / INSERT INTO files.<name>: a new file's content registered as an upload is. */
  readonly files: {
    /** The live file's digest as the read model has it (null: none), read before its rows are. */
    digestOf(name: string): Promise<string | null>;
    /** Where a new file may be written before it is registered (inside DuckDB's allowed directory). */
    tempPath(): string;
    /** `expected`: the digest the new content was made from (null: no file); a change since is a conflict. */
    register(name: string, path: string, originalName: string, expected?: string | null): Promise<unknown>;
  };
};

/** A write done in an integration, as the log records it. */
export type IntegrationWriteRecord = {
  readonly database: string;
  readonly table: string;
  readonly statement:
    'CREATE TABLE' | 'CREATE OR REPLACE TABLE' | 'INSERT' | 'UPDATE' | 'DELETE' | 'DROP TABLE';
  readonly text: string;
  readonly rowsAffected: number;
};
