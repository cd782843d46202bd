import { z } from 'zod';
import type { ToolSpec } from '../llm';

/** What a tool gives back: `content` goes to the model; the rest goes to events and the answer. */
export type ToolOutcome = {
  /** A string is sent as is; anything else as JSON. */
  readonly content: unknown;
  readonly rows?: number;
  /** The digest of the rows it answered (./resultDigest.ts), for a replay to compare. */
  readonly digest?: string;
  /** The SQL the tool ran, when it ran some. */
  readonly sql?: string;
  /** Retrieved documents, for the answer's `context`. */
  readonly context?: readonly unknown[];
};

export type ToolContext = {
  readonly signal: AbortSignal;
  /** The loop cuts longer results; a tool that can cut more cleverly (whole rows) should. */
  readonly maxResultChars: number;
};

/** JSON for the model: BigInt (DuckDB counts) as numbers when exact, dates as ISO, Uint8Array bytes as base64. */
export const toJsonText = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
    return v;
  }) ?? 'null';

/** What kind of work a tool does, so events can be mapped (`sql.executed`, `kb.searched`, …). */
export type ToolKind = 'sql_list_tables' | 'sql_schema' | 'sql_query' | 'kb_query' | 'custom';

/**
 * A failure the model should see and can fix: its message is sent back as `{"error": …}`.
 * `rejected` marks SQL the guard refused (read-only, table allowlist) as opposed to SQL that failed.
 * Ports throw this; any other error is reported the same way, with its message.
 */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly details: { readonly rejected?: boolean; readonly sql?: string } = {},
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export type AgentTool = {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly kind: ToolKind;
  /** Validates the raw (parsed JSON) arguments, then runs; throws ToolError on bad arguments. */
  invoke(args: unknown, context: ToolContext): Promise<ToolOutcome>;
};

const jsonSchemaOf = (schema: z.ZodType): Record<string, unknown> => {
  // Some providers (Gemini's compatibility layer) refuse the `$schema` key.
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'output' }) as Record<string, unknown>;
  return rest;
};

const describeIssues = (error: z.ZodError) =>
  error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`).join('; ');

export const defineTool = <S extends z.ZodType>(spec: {
  name: string;
  description: string;
  kind?: ToolKind;
  schema: S;
  run: (args: z.output<S>, context: ToolContext) => Promise<ToolOutcome>;
}): AgentTool => ({
  name: spec.name,
  description: spec.description,
  kind: spec.kind ?? 'custom',
  parameters: jsonSchemaOf(spec.schema),
  invoke: async (args, context) => {
    const parsed = spec.schema.safeParse(args);
    if (!parsed.success)
      throw new ToolError(
        `invalid arguments for ${spec.name}: ${describeIssues(parsed.error)}. Call it again with arguments matching its schema.`,
      );
    return spec.run(parsed.data, context);
  },
});

export const toolSpecs = (tools: readonly AgentTool[]): ToolSpec[] =>
  tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));

const toolNameSuffix = (label: string) =>
  label
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 30) || 'skill';

/**
 * Tools keep MindsDB's names; when two sources (skills) give the same name, each of them gets its
 * source's name as a suffix (`sql_db_query_sales`, `sql_db_query_hr`), and a number if that still
 * clashes. Names are settled before tools are built, so descriptions can name their siblings.
 */
export const assignToolNames = (entries: readonly { base: string; source: string }[]): string[] => {
  const counts = new Map<string, number>();
  for (const { base } of entries) counts.set(base, (counts.get(base) ?? 0) + 1);
  const taken = new Set<string>();
  return entries.map(({ base, source }) => {
    const wanted = (counts.get(base) ?? 0) > 1 ? `${base}_${toolNameSuffix(source)}`.slice(0, 64) : base;
    let name = wanted;
    for (let n = 2; taken.has(name); n++) name = `${wanted.slice(0, 60)}_${n}`;
    taken.add(name);
    return name;
  });
};
