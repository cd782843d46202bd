import type { SQLNamespace } from '@codemirror/lang-sql';
import { getJson, sqlRows } from './api';

// The data behind the schema tree: what the server reports, read once per refresh, and the
// completion schema the editor gets from it. No DOM here.

export type Row = Record<string, unknown>;
type FileInfo = { name: string; row_count: number; columns: string[]; size: number };
export type Catalog = {
  projects: string[];
  integrations: { name: string; engine: string }[];
  models: Row[];
  byProject: Record<'agents' | 'skills' | 'chatbots' | 'knowledge_bases' | 'views' | 'jobs', Row[]>;
  files: FileInfo[];
  columns: Row[];
};

const PROJECT_TABLES = ['models', 'agents', 'skills', 'chatbots', 'jobs', 'views', 'knowledge_bases'];

/** An information_schema cell as text (null and missing become ''). */
export const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));
export const lower = (v: unknown) => str(v).toLowerCase();

/** Every list the tree shows, read from information_schema (and the files API for sizes). */
export const loadCatalog = async (): Promise<Catalog> => {
  const optional = (q: string) => sqlRows(q).catch(() => [] as Row[]);
  const [databases, models, agents, skills, chatbots, kbs, views, jobs, columns, files] = await Promise.all([
    sqlRows('SELECT NAME, TYPE, ENGINE FROM information_schema.DATABASES'),
    optional('SELECT * FROM information_schema.MODELS'),
    optional('SELECT NAME, PROJECT FROM information_schema.AGENTS'),
    optional('SELECT NAME, PROJECT, TYPE FROM information_schema.SKILLS'),
    optional('SELECT NAME, PROJECT, DATABASE, AGENT, IS_RUNNING FROM information_schema.CHATBOTS'),
    optional('SELECT NAME, PROJECT FROM information_schema.KNOWLEDGE_BASES'),
    optional('SELECT NAME, PROJECT FROM information_schema.VIEWS'),
    optional('SELECT NAME, PROJECT FROM information_schema.JOBS'),
    optional('SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS'),
    getJson<FileInfo[]>('/api/files').catch(() => [] as FileInfo[]),
  ]);
  return {
    projects: databases.filter((d) => d.TYPE === 'project').map((d) => str(d.NAME)),
    integrations: databases
      .filter((d) => d.TYPE === 'data' && d.NAME !== 'files')
      .map((d) => ({ name: str(d.NAME), engine: str(d.ENGINE) })),
    models,
    byProject: { agents, skills, chatbots, knowledge_bases: kbs, views, jobs },
    files,
    columns,
  };
};

/** The completion schema: projects with their tables, models and agents; files; information_schema. */
export const completionSchema = (c: Catalog, integrationTables: Map<string, string[]>): SQLNamespace => {
  const schema: Record<string, Record<string, string[]>> = {};
  const table = (s: string, t: string) => ((schema[s] ??= {})[t] ??= []);
  for (const col of c.columns) table(str(col.TABLE_SCHEMA), str(col.TABLE_NAME)).push(str(col.COLUMN_NAME));
  for (const p of c.projects) for (const t of PROJECT_TABLES) table(p, t);
  for (const m of c.models) table(str(m.PROJECT), str(m.NAME));
  for (const a of c.byProject.agents) table(str(a.PROJECT), str(a.NAME)).push('question', 'answer');
  for (const k of c.byProject.knowledge_bases) table(str(k.PROJECT), str(k.NAME));
  for (const f of c.files)
    table('files', f.name).push(...f.columns.filter((x) => !table('files', f.name).includes(x)));
  for (const [db, tables] of integrationTables) for (const t of tables) table(db, t);
  return schema;
};
