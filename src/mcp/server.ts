import type { Logger } from 'pino';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { isDomainError } from '../shared/errors';
import { currentRequest, withRequest } from '../shared/requestContext';
import type { McpPorts } from './ports';
import { errorAnswer, type ToolAnswer } from './present';
import { writeSqlPrompt } from './prompts';
import {
  CALLER_KEY,
  RECEIPT_META_KEY,
  type Caller,
  type Completed,
  type McpCalls,
  type SessionView,
} from './service';
import { NO_SWITCHES, offersGroup, switchesInstructions, toolsFor, type Switches } from './switches';
import { describeForResource, InvalidToolArguments, type Tool, type ToolDone } from './tools';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * What a handler needs of the request it serves, whichever SDK and protocol era carried it: a
 * session of the 2025 era (SDK 1.x, below) or one stateless 2026-07-28 request (src/mcp/stateless.ts).
 */
export type CallContext = {
  /** The SDK's `authInfo`, whose `extra` carries the caller (routes.ts `authorize`). */
  readonly authInfo?: { readonly extra?: Record<string, unknown> };
  /** What the record names the call's session, client and protocol version by. */
  readonly session: () => SessionView;
  readonly signal: AbortSignal;
  /** The client's progress token, when it asked for progress. */
  readonly progressToken?: string | number;
  readonly notify: (notification: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; message?: string };
  }) => Promise<void>;
};

/** The request arguments the handlers read (the SDKs' request types hold at least these). */
type ToolCall = { readonly params: { readonly name: string; readonly arguments?: Record<string, unknown> } };
type ResourceRead = { readonly params: { readonly uri: string } };
type PromptGet = { readonly params: { readonly name: string; readonly arguments?: Record<string, string> } };

/** MySQL's "access denied": what a tool withheld by the connection's switches is refused with, as a role's refusal is. */
const ACCESS_DENIED = 1227;

const callerOf = (call: Pick<CallContext, 'authInfo'>): Caller => {
  const carried = call.authInfo?.extra?.[CALLER_KEY] as Caller | undefined;
  return carried ?? { request: currentRequest() ?? { requestId: '', interface: 'rest' } };
};

const SCHEMA_URI = /^mindledger:\/\/schema\/([^/]+)\/([^/]+)$/;
const schemaUri = (database: string, table: string) =>
  `mindledger://schema/${encodeURIComponent(database)}/${encodeURIComponent(table)}`;

/** Resources one list names at most (a read of any table's schema works by its URI beyond it). */
const MAX_LISTED_RESOURCES = 500;

const INSTRUCTIONS = [
  'mindledger: a MindsDB-compatible service over an append-only, tamper-evident event log.',
  'Use list_databases, list_tables and describe_table (or the schema resources) to find data, query to run SQL,',
  'search_knowledge_base, ask_agent and predict for knowledge bases, agents and models.',
  `Every call is recorded: the result's _meta["${RECEIPT_META_KEY}"] names its log position, and verify_call proves it.`,
].join(' ');

export type ServerDeps = {
  /** Every tool; the session offers those its switches keep (`toolsFor`). */
  readonly tools: readonly Tool[];
  /** The connection's switches, from its URL when the session opened (none: NO_SWITCHES). */
  readonly switches?: Switches;
  readonly calls: McpCalls;
  readonly ports: McpPorts;
  readonly logger: Logger;
};

/** What every handler of one server shares: its deps and the tools its switches offer. */
type Session = {
  readonly deps: ServerDeps;
  readonly offered: readonly Tool[];
  readonly withheld: ReturnType<typeof toolsFor>['withheld'];
  readonly byName: ReadonlyMap<string, Tool>;
  readonly schemasOffered: boolean;
  readonly promptOffered: boolean;
};

/** A completed call: `ok` with nothing else to record unless `fields` says so. */
const completedWith = <R extends object>(
  result: R,
  fields: Partial<Omit<Completed<R>, 'result'>> = {},
): Completed<R> => ({
  result,
  outcome: 'ok',
  error: null,
  project: null,
  rowCount: null,
  truncated: false,
  traceId: null,
  ...fields,
});

const failedTool = (message: string): Completed<ToolAnswer> =>
  completedWith(errorAnswer(message), { outcome: 'error', error: message });

/** A 2025-era request's call context: its session's id, and the client as `initialize` named it. */
const sessionCall = (server: Server, extra: Extra): CallContext => ({
  authInfo: extra.authInfo,
  session: () => {
    const client = server.getClientVersion();
    const header = extra.requestInfo?.headers['mcp-protocol-version'];
    return {
      id: extra.sessionId ?? 'stateless',
      client: client ? { name: client.name, version: client.version } : null,
      protocolVersion: typeof header === 'string' ? header : null,
    };
  },
  signal: extra.signal,
  progressToken: extra._meta?.progressToken,
  notify: (notification) => extra.sendNotification(notification),
});

/**
 * Runs one call as its caller and records it; the result carries its receipt in `_meta`. A
 * failure is the call's error, never an unrecorded answer: a domain error (the read model behind,
 * a thing not found) says what it says over REST; any other is ours, logged and not described.
 */
const recorded = <R extends object>(
  s: Session,
  extra: CallContext,
  call: { method: string; target: string; args: unknown },
  run: (caller: Caller) => Promise<Completed<R>>,
  failure: (message: string) => Completed<R>,
) => {
  const caller = callerOf(extra);
  return withRequest(caller.request, async () => {
    const startedAt = performance.now();
    let completed: Completed<R>;
    try {
      completed = await run(caller);
    } catch (error) {
      if (error instanceof McpError) {
        const message = error.message;
        await s.deps.calls.record(
          extra.session(),
          caller,
          { ...call, startedAt },
          { ...failure(message), outcome: 'invalid', error: message },
        );
        throw error;
      }
      if (isDomainError(error)) completed = failure(`${error.title}: ${error.detail}`);
      else {
        s.deps.logger.error({ err: error, method: call.method, target: call.target }, 'MCP call failed');
        completed = failure('The call failed inside the server; it is logged');
      }
    }
    if (extra.signal.aborted && completed.outcome === 'ok')
      completed = { ...completed, outcome: 'cancelled', error: 'The client cancelled the request' };
    const receipt = await s.deps.calls.record(extra.session(), caller, { ...call, startedAt }, completed);
    return { ...completed.result, _meta: { [RECEIPT_META_KEY]: receipt } };
  });
};

/**
 * The answer as the client's check of the tool's output schema takes it (the SDK's client checks
 * `structuredContent` whenever it is there, error or not, and throws -32602 "Structured content
 * does not match" otherwise, hiding the error from the user): a tool's error keeps its structured
 * form only where the schema allows it (the SQL tools' `{type: "error", …}`), else it is text
 * alone; an answer of ours that does not fit is logged and answered as the tool's error.
 */
const fitted = (logger: Logger, tool: Tool | undefined, answer: ToolAnswer): ToolAnswer => {
  if (!tool?.output || answer.structuredContent === undefined) return answer;
  const checked = tool.output.safeParse(answer.structuredContent);
  if (checked.success) return answer;
  if (answer.isError) return { content: answer.content, isError: true };
  logger.error(
    { tool: tool.name, issues: checked.error.issues.slice(0, 5) },
    "MCP answer does not fit the tool's output schema",
  );
  return {
    content: [{ type: 'text', text: `${tool.name}'s answer did not fit its output schema; it is logged` }],
    isError: true,
  };
};

const listTools = (s: Session) => ({
  tools: s.offered.map((t) => ({
    name: t.name,
    title: t.annotations.title,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { io: 'input' }) as { type: 'object' },
    ...(t.output ? { outputSchema: z.toJSONSchema(t.output, { io: 'output' }) as { type: 'object' } } : {}),
    annotations: t.annotations,
  })),
});

/** Sends the tool's progress to a client that asked for it (a progress token), while it still listens. */
const progressSender =
  (extra: CallContext) =>
  (progress: number, message?: string): void => {
    const token = extra.progressToken;
    if (token === undefined || extra.signal.aborted) return;
    void extra
      .notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress, message },
      })
      .catch(() => undefined);
  };

/** Runs an offered tool on its validated arguments; an answer that does not fit its schema is its error. */
const runTool = async (
  s: Session,
  tool: Tool,
  request: ToolCall,
  extra: CallContext,
  caller: Caller,
): Promise<Completed<ToolAnswer>> => {
  let done: ToolDone;
  try {
    done = await tool.run(request.params.arguments ?? {}, {
      caller,
      signal: extra.signal,
      progress: progressSender(extra),
    });
  } catch (error) {
    if (!(error instanceof InvalidToolArguments)) throw error;
    const failure = failedTool(error.message);
    return { ...failure, result: fitted(s.deps.logger, tool, failure.result), outcome: 'invalid' };
  }
  const answer = fitted(s.deps.logger, tool, done.answer);
  return answer === done.answer
    ? { ...done, result: answer }
    : {
        ...done,
        result: answer,
        outcome: done.outcome === 'ok' ? 'error' : done.outcome,
        error: done.error ?? answer.content[0]?.text ?? null,
      };
};

const callTool = (s: Session, request: ToolCall, extra: CallContext) => {
  const name = request.params.name;
  const failedCall = (message: string): Completed<ToolAnswer> => {
    const failure = failedTool(message);
    return {
      ...failure,
      result: fitted(s.deps.logger, s.byName.get(name) ?? s.withheld.get(name)?.tool, failure.result),
    };
  };
  return recorded(
    s,
    extra,
    { method: 'tools/call', target: name, args: request.params.arguments ?? {} },
    async (caller) => {
      const held = s.withheld.get(name);
      if (held) {
        // Withheld by the connection's switches: refused as a role's refusal is (error 1227).
        const answer = fitted(s.deps.logger, held.tool, errorAnswer(held.reason, ACCESS_DENIED));
        return { ...failedTool(held.reason), result: answer, outcome: 'refused' };
      }
      const tool = s.byName.get(name);
      if (!tool)
        throw new McpError(
          ErrorCode.InvalidParams,
          `Unknown tool ${JSON.stringify(name).slice(0, 200)}: tools/list names them`,
        );
      return runTool(s, tool, request, extra, caller);
    },
    failedCall,
  );
};

const listResourceTemplates = (s: Session) => ({
  resourceTemplates: !s.schemasOffered
    ? []
    : [
        {
          uriTemplate: 'mindledger://schema/{database}/{table}',
          name: 'table-schema',
          title: "A table's schema",
          description: 'The columns and types of one table, view, knowledge base or model of a database.',
          mimeType: 'application/json',
        },
      ],
});

const listResources = async (s: Session, extra: CallContext) => {
  const caller = callerOf(extra);
  if (!s.schemasOffered) return { resources: [] };
  return withRequest(caller.request, async () => {
    const databases = await s.deps.ports.sql('SHOW DATABASES', 'mindsdb', {}, extra.signal);
    const resources: { uri: string; name: string; mimeType: string; description: string }[] = [];
    if (databases.type !== 'table') return { resources };
    for (const [database] of databases.data) {
      if (resources.length >= MAX_LISTED_RESOURCES) break;
      const db = String(database);
      const tables = await s.deps.ports.sql(
        `SHOW TABLES FROM \`${db.replace(/`/g, '``')}\``,
        db,
        {},
        extra.signal,
      );
      if (tables.type !== 'table') continue;
      for (const [table] of tables.data.slice(0, MAX_LISTED_RESOURCES - resources.length))
        resources.push({
          uri: schemaUri(db, String(table)),
          name: `${db}.${String(table)}`,
          mimeType: 'application/json',
          description: `Columns and types of ${db}.${String(table)}`,
        });
    }
    return { resources };
  });
};

/** The database and table a schema URI names; -32002 (not found) when it names none. */
const schemaTarget = (s: Session, uri: string) => {
  if (!s.schemasOffered)
    throw new McpError(
      -32002,
      "Resource not found: the schema resources are the catalog group's, which this connection's features leave out",
    );
  const m = SCHEMA_URI.exec(uri);
  if (!m)
    throw new McpError(-32002, 'Resource not found: schemas are mindledger://schema/{database}/{table}');
  try {
    return { database: decodeURIComponent(m[1]!), table: decodeURIComponent(m[2]!) };
  } catch {
    throw new McpError(-32002, 'Resource not found: the URI does not decode');
  }
};

const readResource = (s: Session, request: ResourceRead, extra: CallContext) => {
  const uri = request.params.uri;
  return recorded(
    s,
    extra,
    { method: 'resources/read', target: uri, args: { uri } },
    async () => {
      const { database, table } = schemaTarget(s, uri);
      const described = await describeForResource(s.deps.ports, database, table, extra.signal);
      if (described.type === 'error')
        throw new McpError(-32002, `Resource not found: ${described.error_message}`);
      const text = JSON.stringify(described, null, 2);
      return completedWith(
        { contents: [{ uri, mimeType: 'application/json', text }] },
        { project: database, rowCount: described.columns.length },
      );
    },
    (message) => completedWith({ contents: [] }, { outcome: 'error', error: message }),
  );
};

const listPrompts = (s: Session) => ({
  prompts: !s.promptOffered
    ? []
    : [
        {
          name: 'write_sql',
          title: 'Write SQL for this service',
          description:
            "How to write this service's SQL (MindsDB's dialect over DuckDB): names, reads, knowledge bases, agents, predictions, what is refused.",
          arguments: [{ name: 'task', description: 'What the SQL should do', required: false }],
        },
      ],
});

const getPrompt = (s: Session, request: PromptGet, extra: CallContext) =>
  recorded(
    s,
    extra,
    { method: 'prompts/get', target: request.params.name, args: request.params.arguments ?? {} },
    async () => {
      if (request.params.name !== 'write_sql' || !s.promptOffered)
        throw new McpError(ErrorCode.InvalidParams, 'Unknown prompt: prompts/list names them');
      const task = request.params.arguments?.task;
      return completedWith(writeSqlPrompt(typeof task === 'string' ? task : undefined));
    },
    (message) =>
      completedWith({ description: 'The prompt failed', messages: [] }, { outcome: 'error', error: message }),
  );

/** What a server of either era introduces itself with (its info and options). */
export const serverIdentity = (deps: ServerDeps) => {
  const narrowed = switchesInstructions(deps.switches ?? NO_SWITCHES);
  return {
    info: { name: 'mindledger', title: 'mindledger (MindsDB-compatible)', version: deps.ports.serverVersion },
    options: {
      capabilities: { tools: {}, resources: {}, prompts: {} },
      instructions: narrowed === '' ? INSTRUCTIONS : `${INSTRUCTIONS} ${narrowed}`,
    },
  };
};

/**
 * What a server answers, era-blind: one function per MCP method, each given the request and its
 * call context. Every tool call, resource read and prompt fetched is recorded before its answer goes
 * out, whatever came of it: arguments that do not validate, a refusal, a failure, a cancellation.
 */
export const mcpHandlers = (deps: ServerDeps) => {
  const switches = deps.switches ?? NO_SWITCHES;
  const { offered, withheld } = toolsFor(deps.tools, switches);
  const s: Session = {
    deps,
    offered,
    withheld,
    byName: new Map(offered.map((t) => [t.name, t])),
    schemasOffered: offersGroup(switches, 'catalog'),
    promptOffered: offersGroup(switches, 'sql'),
  };
  return {
    listTools: () => listTools(s),
    callTool: (request: ToolCall, call: CallContext) => callTool(s, request, call),
    listResourceTemplates: () => listResourceTemplates(s),
    listResources: (call: CallContext) => listResources(s, call),
    readResource: (request: ResourceRead, call: CallContext) => readResource(s, request, call),
    listPrompts: () => listPrompts(s),
    getPrompt: (request: PromptGet, call: CallContext) => getPrompt(s, request, call),
  };
};

/** One 2025-era MCP server (SDK 1.x's low-level `Server`) for one session. */
export const sessionServer = (deps: ServerDeps) => {
  const { info, options } = serverIdentity(deps);
  const server = new Server(info, options);
  const h = mcpHandlers(deps);
  const call = (extra: Extra) => sessionCall(server, extra);
  server.setRequestHandler(ListToolsRequestSchema, h.listTools);
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => h.callTool(request, call(extra)));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, h.listResourceTemplates);
  server.setRequestHandler(ListResourcesRequestSchema, (_request, extra) => h.listResources(call(extra)));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    h.readResource(request, call(extra)),
  );
  server.setRequestHandler(ListPromptsRequestSchema, h.listPrompts);
  server.setRequestHandler(GetPromptRequestSchema, (request, extra) => h.getPrompt(request, call(extra)));
  return server;
};
