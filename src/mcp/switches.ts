import { z } from 'zod';
import { forbidden, invalid } from '../shared/errors';
import { nameKey } from '../shared/names';
import type { Principal } from '../shared/requestContext';
import type { Tool } from './tools';

/**
 * The tool groups a connection may ask for (`features=catalog,sql`), as Supabase's MCP server
 * groups its tools: each tool is in exactly one group. The schema resources are the catalog's, the
 * `write_sql` prompt is SQL's.
 */
export const TOOL_GROUPS = {
  /** What exists: databases, tables, columns (and the schema resources). */
  catalog: ['list_databases', 'list_tables', 'describe_table'],
  /** SQL: `query` (and the `write_sql` prompt). */
  sql: ['query'],
  knowledge_bases: ['search_knowledge_base'],
  agents: ['ask_agent'],
  models: ['predict'],
  /** The ledger: `verify_call`. */
  audit: ['verify_call'],
} as const satisfies Record<string, readonly string[]>;

export type ToolGroup = keyof typeof TOOL_GROUPS;
export const GROUP_NAMES = Object.keys(TOOL_GROUPS) as ToolGroup[];

/** The group a tool is in (undefined: a tool no group names, which `features` never offers). */
export const groupOf = (toolName: string): ToolGroup | undefined =>
  GROUP_NAMES.find((g) => (TOOL_GROUPS[g] as readonly string[]).includes(toolName));

/**
 * One connection's switches, from its MCP URL's query (`/mcp/?read_only=true&project=p&features=sql`),
 * fixed for its session. Each can only narrow what the caller's credentials allow.
 */
export type Switches = {
  /** Mutating tools withheld; SQL runs as the analyst role runs it (reads only). */
  readonly readOnly: boolean;
  /** Only this project, as a token scoped to it sees the service. */
  readonly project: string | null;
  /** Only these groups' tools (null: every group). */
  readonly features: readonly ToolGroup[] | null;
};

export const NO_SWITCHES: Switches = { readOnly: false, project: null, features: null };

export const SWITCH_NAMES = ['read_only', 'project', 'features'] as const;

const MAX_ECHO = 100;
/** A client's text quoted in a problem: JSON-quoted (NUL and lone surrogates escaped), bounded. */
const quoted = (text: string) =>
  JSON.stringify(text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text).replace(
    /[\ud800-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16)}`,
  );

const readOnlySchema = z.enum(['true', 'false'], { error: 'read_only is true or false' });
const projectSchema = z
  .string()
  .min(1, 'project is empty: name a project (list_databases names them)')
  .max(256, 'project is longer than 256 characters')
  .refine((s) => s.isWellFormed() && ![...s].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f'), {
    error: 'project holds a control character or a lone surrogate',
  });
const featuresSchema = z
  .string()
  .min(1, `features is empty: name one or more of ${GROUP_NAMES.join(', ')}`)
  .max(1_000, 'features is longer than 1,000 characters');

const problem = (detail: string) => invalid(detail, 'Invalid MCP URL switch');

/**
 * The switches a request's URL query gives (express's query: a string, or an array when repeated),
 * checked by zod: a parameter that is no switch, one given twice, a value outside its switch's, each
 * a 400 naming it. `others` are parameters the URL may carry besides (`sessionId` at /mcp/messages).
 * Undefined switches were not given.
 */
export const parseSwitches = (
  query: Record<string, unknown>,
  others: readonly string[] = [],
): Partial<Switches> => {
  const given: { -readonly [K in keyof Switches]?: Switches[K] } = {};
  for (const [key, value] of Object.entries(query)) {
    if (others.includes(key)) continue;
    if (!(SWITCH_NAMES as readonly string[]).includes(key))
      throw problem(
        `Unknown switch ${quoted(key)} in the MCP URL: it takes ${SWITCH_NAMES.join(', ')} (docs/mcp.md)`,
      );
    if (typeof value !== 'string')
      throw problem(`Switch ${key} is given ${Array.isArray(value) ? 'more than once' : 'as no text'}`);
    const failed = (error: z.ZodError) =>
      problem(`Switch ${key}=${quoted(value)}: ${error.issues[0]?.message ?? 'not a value it takes'}`);
    switch (key) {
      case 'read_only': {
        const parsed = readOnlySchema.safeParse(value);
        if (!parsed.success) throw failed(parsed.error);
        given.readOnly = parsed.data === 'true';
        break;
      }
      case 'project': {
        const parsed = projectSchema.safeParse(value);
        if (!parsed.success) throw failed(parsed.error);
        given.project = parsed.data;
        break;
      }
      case 'features': {
        const parsed = featuresSchema.safeParse(value);
        if (!parsed.success) throw failed(parsed.error);
        const groups: ToolGroup[] = [];
        for (const item of parsed.data.split(',')) {
          const group = item.trim().toLowerCase();
          if (!(GROUP_NAMES as string[]).includes(group))
            throw problem(
              `Switch features names ${group === '' ? 'an empty group' : `an unknown group ${quoted(item.trim())}`}: the groups are ${GROUP_NAMES.join(', ')}`,
            );
          if (!groups.includes(group as ToolGroup)) groups.push(group as ToolGroup);
        }
        given.features = GROUP_NAMES.filter((g) => groups.includes(g));
        break;
      }
    }
  }
  return given;
};

/** The switches a session opens with: what the URL gave, the rest off. */
export const switchesOf = (given: Partial<Switches>): Switches => ({ ...NO_SWITCHES, ...given });

/** The switches as the URL would give them (`read_only=true&project=p&features=sql`), for messages and status. */
export const switchesText = (s: Switches) =>
  [
    ...(s.readOnly ? ['read_only=true'] : []),
    ...(s.project !== null ? [`project=${s.project}`] : []),
    ...(s.features !== null ? [`features=${s.features.join(',')}`] : []),
  ].join('&');

/** The switches a URL gave, as it gave them (`read_only=false` too), for messages. */
export const givenText = (given: Partial<Switches>) =>
  [
    ...(given.readOnly !== undefined ? [`read_only=${given.readOnly}`] : []),
    ...(given.project !== undefined && given.project !== null ? [`project=${given.project}`] : []),
    ...(given.features !== undefined && given.features !== null
      ? [`features=${given.features.join(',')}`]
      : []),
  ].join('&');

/**
 * Whether a request's URL may go to a session opened with `session`: a request naming no switch
 * takes the session's; one naming any must name the same (a session's switches never change).
 */
export const sameSwitches = (session: Switches, given: Partial<Switches>) => {
  // Project names compare as names do (case-insensitively): the session keeps the project's own spelling.
  const key = (s: Switches) =>
    switchesText({ ...s, project: s.project === null ? null : nameKey(s.project) });
  return Object.keys(given).length === 0 || key(session) === key(switchesOf(given));
};

/**
 * What a caller may do on a connection with these switches: their principal narrowed, never
 * widened. `read_only` makes an admin or editor an analyst (SQL reads only; no native query on an
 * integration, which runs with its stored credentials); analysts and auditors are already narrower.
 * `project` scopes an unscoped principal to that project, as a project-scoped token is; a token
 * scoped to another project is refused (403). With sign-in off (no principal: anyone the Host check
 * let in, with every right), a switch makes a principal of the actor (`user`) with those rights narrowed.
 */
export const narrowPrincipal = (
  principal: Principal | undefined,
  switches: Switches,
  user: string,
): Principal | undefined => {
  if (!switches.readOnly && switches.project === null) return principal;
  const base: Principal = principal ?? { user, role: 'admin', project: null };
  let project = base.project;
  if (switches.project !== null) {
    if (base.project !== null && nameKey(base.project) !== nameKey(switches.project))
      throw forbidden(
        `This token reaches only project ${base.project}: project=${quoted(switches.project)} would widen it (a switch only narrows what the token allows)`,
        'MCP URL switch widens the token',
      );
    project = base.project ?? switches.project;
  }
  const role = switches.readOnly && (base.role === 'admin' || base.role === 'editor') ? 'analyst' : base.role;
  return { user: base.user, role, project };
};

/** A tool that changes something (its hints say so) and has no read-only form: withheld by read_only. */
const mutating = (tool: Tool) => !tool.annotations.readOnlyHint;

/**
 * The tools a connection offers, and why each other one is withheld (its call is refused with that
 * reason). On a read-only connection a mutating tool takes its read-only form (`query`: SQL run as
 * reads only) or is withheld; `features` keeps only its groups' tools.
 */
export const toolsFor = (all: readonly Tool[], switches: Switches) => {
  const offered: Tool[] = [];
  const withheld = new Map<string, { readonly tool: Tool; readonly reason: string }>();
  for (const tool of all) {
    const group = groupOf(tool.name);
    if (switches.features !== null && (group === undefined || !switches.features.includes(group))) {
      withheld.set(tool.name, {
        tool,
        reason: `${tool.name} is not offered on this connection: its URL asks for features=${switches.features.join(',')}, and ${tool.name} is in ${group ?? 'no group'}`,
      });
      continue;
    }
    if (switches.readOnly && mutating(tool)) {
      const readOnly = tool.readOnlyForm?.();
      if (readOnly) offered.push(readOnly);
      else
        withheld.set(tool.name, {
          tool,
          reason: `${tool.name} changes data and this connection is read-only (read_only=true in its URL)`,
        });
      continue;
    }
    offered.push(tool);
  }
  return { offered, withheld };
};

/** Whether the connection offers a group (the schema resources are catalog's, the prompt sql's). */
export const offersGroup = (switches: Switches, group: ToolGroup) =>
  switches.features === null || switches.features.includes(group);

/** What the server's instructions say of the connection's switches ('' when none is on). */
export const switchesInstructions = (s: Switches) => {
  const said = [
    ...(s.readOnly ? ['it is read-only (SQL reads only; writes are refused with error 1227)'] : []),
    ...(s.project !== null ? [`it reaches project ${s.project} only`] : []),
    ...(s.features !== null ? [`it offers the tool groups ${s.features.join(', ')} only`] : []),
  ];
  return said.length === 0 ? '' : `This connection's URL narrows it: ${said.join('; ')}.`;
};
