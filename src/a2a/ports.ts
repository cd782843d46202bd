import type { AgentRunEvent as LoopStep, RunAnswer } from '../engines/agentLoop';
import type { Principal } from '../shared/requestContext';

/** What an agent card says of an agent: nothing secret (no params, no keys), its skills by name. */
export type A2aAgent = {
  readonly projectId: number;
  readonly agentId: number;
  readonly project: string;
  readonly name: string;
  readonly description: string | null;
  /** Changes whenever the agent does (its card's version, and what cached handlers are keyed on). */
  readonly version: string;
  readonly skills: readonly {
    readonly name: string;
    readonly type: string;
    readonly description: string | null;
  }[];
};

type A2aAnswer = RunAnswer;

/**
 * Thrown by `ask` when the agent gave no answer: the run's failure kind (`aborted` when it was
 * cancelled) or `invalid` when the question was refused before any run started (no trace then).
 */
export class A2aAskFailed extends Error {
  constructor(
    readonly kind: string,
    message: string,
    readonly started: boolean,
  ) {
    super(message);
    this.name = 'A2aAskFailed';
  }
}

/**
 * What the A2A server needs of the rest of the service, filled by the composition root
 * (src/wiring/a2a.ts). Every operation runs as the request's caller (the request context).
 */
export type A2aPorts = {
  /** The agent as its card shows it; a DomainError (404) when the project or agent does not exist. */
  readonly describeAgent: (project: string, agent: string) => Promise<A2aAgent>;
  /**
   * The agent's usual run (REST's completions), recorded on its own stream `agent-run-<traceId>`
   * with `via: a2a`, asked in the server-side thread `threadId`. `onStep` is told each step once
   * it is recorded; a run that gives no answer throws `A2aAskFailed`.
   */
  readonly ask: (
    request: {
      readonly project: string;
      readonly agent: string;
      readonly question: string;
      readonly threadId: string;
      readonly traceId: string;
    },
    handlers: { readonly signal: AbortSignal; readonly onStep: (step: LoopStep) => void },
  ) => Promise<A2aAnswer>;
  /**
   * Why this caller may not use the agent (`ask`: send, stream, get and cancel tasks, as REST's
   * `POST …/agents/{agent}/completions`; `read`: its card, as `GET …/agents/{agent}`), or null.
   */
  readonly refusal: (
    principal: Principal,
    project: string,
    agent: string,
    what: 'ask' | 'read',
  ) => string | null;
  /** Whether sign-in is on (users exist): then every A2A request needs a bearer token or a session. */
  readonly authEnabled: () => Promise<boolean>;
  /** This server's version, as the cards name it. */
  readonly serverVersion: string;
};
