import type { AgentRunEvent as LoopStep } from '../engines/agentLoop';

/** A SQL answer as the SQL endpoint gives it (MindsDB's `{type: table|ok|error, …}`). */
export type McpSqlAnswer =
  | {
      readonly type: 'table';
      readonly column_names: readonly string[];
      readonly column_types: readonly string[];
      readonly data: readonly (readonly unknown[])[];
      readonly truncated?: true;
    }
  | { readonly type: 'ok'; readonly affected_rows?: number | null }
  | { readonly type: 'error'; readonly error_code: number; readonly error_message: string };

type AgentAnswer = {
  readonly traceId: string;
  readonly answer: string;
  readonly sql: readonly string[];
  readonly context: readonly unknown[];
};

/** An agent run that gave no answer: why (the run's failure kind), and the run to look up. */
type AgentFailure = {
  readonly traceId: string | null;
  readonly kind: string;
  readonly message: string;
};

/** Thrown by `askAgent` when the run gave no answer (the provider failed, it timed out, it was cancelled). */
export class AgentAskFailed extends Error {
  constructor(readonly failure: AgentFailure) {
    super(failure.message);
    this.name = 'AgentAskFailed';
  }
}

/** The inclusion proof of one event against the latest signed checkpoint (GET /api/audit/proof/{position}). */
type InclusionProof = {
  readonly leaf_index: number;
  readonly tree_size: number;
  readonly leaf_hash: string;
  readonly root_hash: string;
  readonly inclusion_path: readonly string[];
  readonly checkpoint: string;
};

/**
 * What the MCP server needs of the rest of the service, filled by the composition root. Every
 * operation runs as the request's caller (the request context carries their role and scope), so
 * SQL refuses what it refuses over every other door.
 */
export type McpPorts = {
  /** One statement, as `POST /api/sql/query` runs it, in database `db`. */
  readonly sql: (
    query: string,
    db: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ) => Promise<McpSqlAnswer>;
  /**
   * An agent's answer to one question: the agent's usual run, recorded on its own stream
   * (`agent-run-<trace id>`). `onStart` is told the run's trace id before it runs, `onStep` each
   * step as it is recorded; a run that gives no answer throws an `AgentFailure`-shaped error.
   */
  readonly askAgent: (
    request: { readonly project: string; readonly agent: string; readonly question: string },
    handlers: {
      readonly signal: AbortSignal;
      readonly onStart: (traceId: string) => void;
      readonly onStep: (step: LoopStep) => void;
    },
  ) => Promise<AgentAnswer>;
  /** The ledger: an event's inclusion proof, and the keys and origin its checkpoints are signed with. */
  readonly ledger: {
    readonly proof: (position: bigint) => Promise<InclusionProof>;
    readonly trustedKeys: () => readonly string[];
  };
  /** Whether sign-in is on (users exist): then every MCP request needs a bearer token or a session. */
  readonly authEnabled: () => Promise<boolean>;
  /** This server's version, as `initialize` names it. */
  readonly serverVersion: string;
};
