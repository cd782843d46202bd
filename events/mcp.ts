import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const mcpSessionResource: ResourceDeclaration = { kind: 'mcpSession', id: 'sessionId' };

/**
 * One call an AI assistant made over MCP (`POST /mcp/`): a tool called, a resource read or a prompt
 * fetched, and what came of it. On the session's own stream (`mcp-session-<session id>`), never a
 * project's: assistants call often. The arguments are kept with their secrets masked (a mask in SQL
 * text or under a secret's key is sealed in place like any secret), bounded; the answer only as its hash (SHA-256 of its canonical JSON), so the call can be
 * proved later (the ledger's inclusion proof of this event, then the answer against the hash)
 * without the log keeping what the assistant read.
 */
export const McpCallRecorded = defineEvent(
  'McpCallRecorded',
  z.object({
    sessionId: z.string(),
    /** 1, 2, … within the session. */
    seq: z.number().int().min(1),
    /** `tools/call`, `resources/read` or `prompts/get`. */
    method: z.string(),
    /** The tool's or prompt's name, or the resource's URI, as the client sent it (bounded). */
    target: z.string(),
    /** The arguments as JSON text, secrets masked, cut at 16,000 characters (a query's statement apart). */
    arguments: z.string(),
    /** The statement of a `query` call, secrets masked, cut at 16,000 characters. */
    sql: z.string().nullable(),
    /** The project the call was about (the agent's, the model's, the query's database), if any. */
    project: z.string().nullable(),
    caller: z.object({
      /** `token:<id>`, `user:<id>` (a session cookie) or `address:<ip>` (authentication off). */
      actor: z.string(),
      user: z.string().nullable(),
      role: z.string().nullable(),
      /** The project a scoped token is held to. */
      scope: z.string().nullable(),
    }),
    /** The client as it named itself in `initialize`. */
    client: z.object({ name: z.string(), version: z.string() }).nullable(),
    protocolVersion: z.string().nullable(),
    /** ok, error (the tool failed), refused (the caller's role), invalid (bad arguments), cancelled. */
    outcome: z.enum(['ok', 'error', 'refused', 'invalid', 'cancelled']),
    error: z.string().nullable(),
    rowCount: z.number().int().min(0).nullable(),
    truncated: z.boolean(),
    /** SHA-256 (hex) of the canonical JSON of the result the client got (without its `_meta`). */
    answerHash: z.string(),
    /** The agent run an `ask_agent` call started (its own stream, `agent-run-<trace id>`). */
    traceId: z.string().nullable(),
    ms: z.number().int().min(0),
    calledAt: z.iso.datetime(),
  }),
  { resource: mcpSessionResource },
);

export type McpCallRecorded = EventOf<typeof McpCallRecorded>;
export type McpEvent = McpCallRecorded;
export const mcpContracts = [McpCallRecorded] as const;
