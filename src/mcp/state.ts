import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';

/**
 * An MCP session's own stream: every call an assistant made in it, never a project's stream (an
 * assistant calls often; a project's stream stays small).
 */
export const sessionStream = (sessionId: string) => `mcp-session-${sessionId}`;

/** What recording the next call needs: how many the session has made. */
export type SessionState = { readonly calls: number };

export const sessionAggregate: Aggregate<SessionState> = {
  initialState: () => ({ calls: 0 }),
  evolve: (state, event: RecordedEvent): SessionState => {
    switch (event.type) {
      case 'McpCallRecorded':
        return { calls: Math.max(state.calls, event.data.seq) };
      default:
        return state;
    }
  },
};
