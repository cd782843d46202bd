/**
 * The A2A specs' world: the app on a real port, and the official A2A client (`@a2a-js/sdk/client`:
 * the card fetched from the agent's URL, JSON-RPC), sending `headers` on every request.
 */
import type * as ClientSdk from '@a2a-js/sdk/client' with { 'resolution-mode': 'import' };
import type * as Core from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import type { TestApp } from '../support/app';

/* eslint-disable @typescript-eslint/no-require-imports */
// The SDK's types are ECMAScript declarations; Node loads its CommonJS build (as src/a2a/sdk.ts).
const sdk = require('@a2a-js/sdk/client') as typeof ClientSdk;
const core = require('@a2a-js/sdk') as typeof Core;
/* eslint-enable @typescript-eslint/no-require-imports */

export { listen, type Listening } from '../mcp/support';
export const { TaskState, Role } = core;
export type Task = Core.Task;
export type Message = Core.Message;
export type AgentCard = Core.AgentCard;
export type StreamResponse = Core.StreamResponse;
export type A2aClient = ClientSdk.Client;

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** fetch with `headers` added to every request. */
export const fetchWith =
  (headers: Record<string, string>): typeof fetch =>
  (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) merged.set(k, v);
    return fetch(input, { ...init, headers: merged });
  };

/** The agent's A2A URL. */
export const agentUrl = (base: string, project: string, agent: string) =>
  `${base}/a2a/${encodeURIComponent(project)}/${encodeURIComponent(agent)}/`;

/** A client made from the agent's card (fetched from its well-known path), as an A2A caller makes one. */
export const a2aClient = async (url: string, headers: Record<string, string> = {}) => {
  const fetchImpl = fetchWith(headers);
  const factory = new sdk.ClientFactory(
    sdk.ClientFactoryOptions.createFrom(sdk.ClientFactoryOptions.default, {
      transports: [new sdk.JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new sdk.DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(url);
};

/** A user's text message (the client sends it as the protocol's Message). */
export const userText = (
  text: string,
  options: { contextId?: string; messageId?: string } = {},
): Message => ({
  messageId: options.messageId ?? `m-${Math.random().toString(36).slice(2)}`,
  contextId: options.contextId ?? '',
  taskId: '',
  role: core.Role.ROLE_USER,
  parts: [
    { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined },
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** A send's answer as a task (the server answers every message with one). */
export const asTask = (result: unknown): Task => {
  const r = result as Task & { parts?: unknown };
  if (typeof r?.id !== 'string' || r.status === undefined)
    throw new Error(`a task expected: ${JSON.stringify(result).slice(0, 400)}`);
  return r;
};

export const textOf = (message: Message | undefined) =>
  (message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

/** The run's events, from the log. */
export const runEvents = async (t: TestApp, traceId: string) =>
  (await t.running.ctx.log.readStream(`agent-run-${traceId}`, 0n)).events;
