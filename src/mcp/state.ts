import { recordedCallsAggregate, type RecordedCallsState } from '../shared/aggregate';

/**
 * An MCP session's own stream: every call an assistant made in it, never a project's stream (an
 * assistant calls often; a project's stream stays small).
 */
export const sessionStream = (sessionId: string) => `mcp-session-${sessionId}`;

export type SessionState = RecordedCallsState;

export const sessionAggregate = recordedCallsAggregate('McpCallRecorded');
