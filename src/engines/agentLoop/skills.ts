import { kbTool, KB_TOOL_BASE_NAME, type KbScope, type KnowledgeBaseSearchPort } from './kbTools';
import { SQL_TOOL_BASE_NAMES, sqlTools, type SqlScope, type SqlToolPort } from './sqlTools';
import { assignToolNames, type AgentTool } from './tools';

/** A skill as an agent run sees it: the skill, plus the agent↔skill link's parameters. */
export type AgentSkill = {
  readonly name: string;
  readonly type: string;
  readonly params: Readonly<Record<string, unknown>>;
  /** `agent_skills.parameters`, e.g. `{tables: [...]}` narrowing a sql skill. */
  readonly linkParameters?: Readonly<Record<string, unknown>>;
};

/** An agent's `data` (MindsDB v26): what it may read without skills. */
export type AgentData = {
  readonly tables?: readonly string[];
  readonly knowledge_bases?: readonly string[];
};

export type AgentToolPorts = { readonly sql?: SqlToolPort; readonly kb?: KnowledgeBaseSearchPort };

type AgentSetupErrorKind = 'unsupported_skill' | 'invalid_skill' | 'missing_port';

/** A skill that cannot become tools; the lead maps it to a 400 (MindsDB fails the run the same way). */
export class AgentSetupError extends Error {
  constructor(
    readonly kind: AgentSetupErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'AgentSetupError';
  }
}

const SUPPORTED_SKILL_TYPES = ['sql', 'text2sql', 'knowledge_base', 'retrieval'] as const;

/** `text2sql` is the legacy name of `sql`; "Knowledge Base" is how MindsDB's own tests spell one. */
export const canonicalSkillKind = (type: string): 'sql' | 'knowledge_base' | 'retrieval' | undefined => {
  const t = type
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  if (t === 'sql' || t === 'text2sql' || t === 'text_to_sql') return 'sql';
  if (t === 'knowledge_base' || t === 'retrieval') return t;
  return undefined;
};

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** MindsDB accepts lists, comma-separated strings, and `{schema, table}` objects. */
const nameList = (v: unknown): string[] => {
  if (typeof v === 'string')
    return v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (!Array.isArray(v)) return [];
  return v.flatMap((item: unknown) => {
    if (typeof item === 'string') return item.trim() ? [item.trim()] : [];
    if (typeof item === 'object' && item !== null && 'table' in item && typeof item.table === 'string')
      return 'schema' in item && typeof item.schema === 'string' && item.schema
        ? [`${item.schema}.${item.table}`]
        : [item.table];
    return [];
  });
};

const bare = (table: string) => (table.split('.').pop() ?? table).toLowerCase();

/** A link's `tables` narrows the skill's own; narrowing to nothing is an error, as in MindsDB. */
const sqlScopeOf = (skill: AgentSkill): SqlScope => {
  const own = [...nameList(skill.params.tables), ...nameList(skill.params.include_tables)];
  const linked = nameList(skill.linkParameters?.tables);
  let tables = own;
  if (linked.length) {
    tables = own.length ? own.filter((t) => linked.some((l) => bare(l) === bare(t))) : linked;
    if (!tables.length)
      throw new AgentSetupError(
        'invalid_skill',
        `the agent's tables for skill ${skill.name} (${linked.join(', ')}) are not among the skill's tables (${own.join(', ')})`,
      );
  }
  return {
    source: skill.name,
    database: text(skill.params.database) ?? 'mindsdb',
    tables,
    description: text(skill.params.description),
  };
};

type Source = { kind: 'sql'; scope: SqlScope } | { kind: 'kb'; scope: KbScope };

const sourcesOf = (skills: readonly AgentSkill[], data: AgentData | undefined): Source[] => {
  const out: Source[] = [];
  for (const skill of skills) {
    const kind = canonicalSkillKind(skill.type);
    switch (kind) {
      case 'sql': {
        out.push({ kind: 'sql', scope: sqlScopeOf(skill) });
        const kbs = nameList(skill.params.include_knowledge_bases);
        if (kbs.length)
          out.push({
            kind: 'kb',
            scope: { source: skill.name, knowledgeBases: kbs, description: text(skill.params.description) },
          });
        break;
      }
      case 'knowledge_base':
      case 'retrieval': {
        const source = text(skill.params.source);
        if (!source)
          throw new AgentSetupError(
            'invalid_skill',
            `skill ${skill.name} names no knowledge base in "source"`,
          );
        out.push({
          kind: 'kb',
          scope: {
            source: skill.name,
            knowledgeBases: [source],
            description: text(skill.params.description),
          },
        });
        break;
      }
      case undefined:
        throw new AgentSetupError(
          'unsupported_skill',
          `skill ${skill.name} has type '${skill.type}', which an agent cannot use; supported types: ${SUPPORTED_SKILL_TYPES.join(', ')}`,
        );
      default: {
        const _exhaustive: never = kind;
        return _exhaustive;
      }
    }
  }
  const tables = nameList(data?.tables);
  if (tables.length) out.push({ kind: 'sql', scope: { source: 'data', database: null, tables } });
  const kbs = nameList(data?.knowledge_bases);
  if (kbs.length) out.push({ kind: 'kb', scope: { source: 'data', knowledgeBases: kbs } });
  return out;
};

/**
 * The tools an agent run gets from its skills and `data`, with MindsDB's names
 * (`sql_db_list_tables`, `sql_db_schema`, `sql_db_query`, `kb_query_tool`), suffixed with the
 * skill's name when two sources give the same one. Resolved when a run starts (a snapshot).
 */
export const toolsFromSkills = (
  agent: { readonly skills?: readonly AgentSkill[]; readonly data?: AgentData },
  ports: AgentToolPorts,
  options: { queryLimit?: number; sampleRows?: number; kbLimit?: number } = {},
): AgentTool[] => {
  const sources = sourcesOf(agent.skills ?? [], agent.data);
  const bases = sources.flatMap((s) =>
    s.kind === 'sql'
      ? [SQL_TOOL_BASE_NAMES.listTables, SQL_TOOL_BASE_NAMES.schema, SQL_TOOL_BASE_NAMES.query].map(
          (base) => ({
            base,
            source: s.scope.source,
          }),
        )
      : [{ base: KB_TOOL_BASE_NAME, source: s.scope.source }],
  );
  const names = assignToolNames(bases);
  let at = 0;
  return sources.flatMap((s): AgentTool[] => {
    switch (s.kind) {
      case 'sql': {
        if (!ports.sql)
          throw new AgentSetupError(
            'missing_port',
            'this server cannot run sql skills (no SQL port was given)',
          );
        const [listTables, schema, query] = [names[at]!, names[at + 1]!, names[at + 2]!];
        at += 3;
        return sqlTools(s.scope, ports.sql, { listTables, schema, query }, options);
      }
      case 'kb': {
        if (!ports.kb)
          throw new AgentSetupError(
            'missing_port',
            'this server cannot search knowledge bases yet (no knowledge-base port was given)',
          );
        const name = names[at]!;
        at += 1;
        return [kbTool(s.scope, ports.kb, name, { defaultLimit: options.kbLimit })];
      }
      default: {
        const _exhaustive: never = s;
        return _exhaustive;
      }
    }
  });
};
