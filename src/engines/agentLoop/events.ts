import type { FinishReason, LlmErrorKind, Usage } from '../llm';
import type { ToolKind } from './tools';

export type RunLimits = {
  /** Model calls that may request tools; then one more call, without tools, for the answer. */
  readonly maxSteps: number;
  /** The whole run, model calls and tools included. */
  readonly timeoutMs: number;
  /** Tool calls failing in a row before the run gives up. */
  readonly maxConsecutiveToolErrors: number;
  /** A tool result longer than this is cut before it goes to the model. */
  readonly maxToolResultChars: number;
};

export const DEFAULT_RUN_LIMITS: RunLimits = {
  maxSteps: 10,
  timeoutMs: 300_000,
  maxConsecutiveToolErrors: 3,
  maxToolResultChars: 8_000,
};

/**
 * Why a run ended without an answer. The LLM kinds come from the provider (see LlmError); `timeout`
 * is also the run's own deadline; `aborted` is the caller's signal; `refused`: the caller's gate
 * refused a model call before it was made (an LLM budget, src/agentRuns/completion.ts).
 */
export type RunFailureKind =
  LlmErrorKind | 'tool_errors' | 'max_steps' | 'empty_answer' | 'internal' | 'refused';

type ToolCallSummary = { readonly id: string; readonly name: string; readonly arguments: string };

/**
 * What `onEvent` receives, in this order for one run:
 * run.started, then per step llm.request → llm.response → (tool.called → tool.result)*, and
 * finally run.answered or run.failed. `step` counts model calls from 1. No event holds a key.
 */
export type AgentRunEvent =
  | {
      readonly type: 'run.started';
      readonly model: string;
      readonly question: string;
      readonly historyMessages: number;
      readonly tools: readonly string[];
      readonly limits: RunLimits;
      readonly stream: boolean;
    }
  | {
      readonly type: 'llm.request';
      readonly step: number;
      readonly model: string;
      readonly messageCount: number;
      readonly tools: readonly string[];
      /** `none` on the last call after max steps: the model must answer. */
      readonly toolChoice: 'auto' | 'none' | null;
    }
  | {
      readonly type: 'llm.response';
      readonly step: number;
      readonly finishReason: FinishReason;
      readonly content: string | null;
      readonly toolCalls: readonly ToolCallSummary[];
      readonly usage: Usage | null;
      readonly latencyMs: number;
      readonly retries: number;
    }
  | {
      readonly type: 'tool.called';
      readonly step: number;
      readonly callId: string;
      readonly name: string;
      /** `unknown` when the model named a tool the agent does not have. */
      readonly kind: ToolKind | 'unknown';
      /** The parsed arguments, or the raw text when it was not JSON. */
      readonly args: unknown;
    }
  | {
      readonly type: 'tool.result';
      readonly step: number;
      readonly callId: string;
      readonly name: string;
      readonly kind: ToolKind | 'unknown';
      readonly ok: boolean;
      /** When not ok: what the model was told. */
      readonly error?: string;
      /** When not ok: the guard refused the SQL (as opposed to it failing). */
      readonly rejected?: boolean;
      readonly sql?: string;
      readonly rows?: number;
      /** The digest of the rows the tool answered (./resultDigest.ts). */
      readonly digest?: string;
      /** The result sent to the model was cut to `maxToolResultChars`. */
      readonly truncated?: boolean;
      readonly ms: number;
    }
  | {
      readonly type: 'run.answered';
      readonly answer: string;
      readonly sql: readonly string[];
      readonly context: readonly unknown[];
      readonly steps: number;
      readonly usage: Usage | null;
      readonly ms: number;
    }
  | {
      readonly type: 'run.failed';
      readonly kind: RunFailureKind;
      readonly message: string;
      readonly steps: number;
      readonly usage: Usage | null;
      readonly ms: number;
    };

/** MindsDB's `error_type` in a completions stream's `{"type":"error"}` chunk. */
type MindsDbStreamErrorType =
  'timeout' | 'connection' | 'authentication' | 'not_found' | 'rate_limit' | 'general';

export const mindsDbErrorType = (kind: RunFailureKind): MindsDbStreamErrorType => {
  switch (kind) {
    case 'timeout':
      return 'timeout';
    case 'unreachable':
      return 'connection';
    case 'authentication':
      return 'authentication';
    case 'not_found':
      return 'not_found';
    case 'rate_limit':
      return 'rate_limit';
    case 'bad_request':
    case 'provider_error':
    case 'aborted':
    case 'tool_errors':
    case 'max_steps':
    case 'empty_answer':
    case 'internal':
    case 'refused': // a budget refused the call: retrying soon would be refused again
      return 'general';
    default: {
      const _exhaustive: never = kind;
      return _exhaustive;
    }
  }
};

/**
 * What a step of a run says to a client following it (MCP progress, A2A status updates): the
 * model's and the tools' steps only.
 */
export const stepText = (step: AgentRunEvent): string | null => {
  switch (step.type) {
    case 'llm.request':
      return `step ${step.step}: asking the model`;
    case 'tool.called':
      return `step ${step.step}: calling ${step.name}`;
    case 'tool.result':
      return `step ${step.step}: ${step.name} ${step.ok ? 'answered' : 'failed'}`;
    default:
      return null;
  }
};
