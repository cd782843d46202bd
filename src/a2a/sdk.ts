/**
 * The A2A SDK (`@a2a-js/sdk`) ships ECMAScript-module type declarations only, for a CommonJS build
 * it also ships: Node's `require` loads that build (the package's `require` export), and the types
 * are read from the ECMAScript declarations (`resolution-mode: import`). Everything of the SDK this
 * slice uses goes through here.
 */
import type * as Core from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import type * as Errors from '@a2a-js/sdk/errors' with { 'resolution-mode': 'import' };
import type * as Server from '@a2a-js/sdk/server' with { 'resolution-mode': 'import' };
import type * as ServerExpress from '@a2a-js/sdk/server/express' with { 'resolution-mode': 'import' };

export type {
  Artifact,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  Part,
  StreamResponse,
  Task,
} from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
export type {
  A2ARequestHandler,
  AgentExecutor,
  ExecutionEventBus,
  RequestContext,
  TaskStore,
  User,
} from '@a2a-js/sdk/server' with { 'resolution-mode': 'import' };

/* eslint-disable @typescript-eslint/no-require-imports */
const core = require('@a2a-js/sdk') as typeof Core;
const errors = require('@a2a-js/sdk/errors') as typeof Errors;
const server = require('@a2a-js/sdk/server') as typeof Server;
const serverExpress = require('@a2a-js/sdk/server/express') as typeof ServerExpress;
/* eslint-enable @typescript-eslint/no-require-imports */

export const { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, AgentCard, Role, TaskState } = core;
export type TaskState = Core.TaskState;
export type AgentCard = Core.AgentCard;

export const { RequestMalformedError, UnsupportedOperationError, toJsonRpcError } = errors;

export const { AgentEvent, DefaultExecutionEventBusManager, DefaultRequestHandler, ServerCallContext } =
  server;

export const { agentCardHandler, jsonRpcHandler } = serverExpress;
