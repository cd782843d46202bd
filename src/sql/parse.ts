import { compiledParser } from './statements/compiledParser';
import { grammar } from './grammar';

/** A value in `USING k = v` / `PARAMETERS = {...}`: strings, numbers, booleans, lists, JSON objects. */
export type UsingValue = string | number | boolean | null | UsingValue[] | { [k: string]: UsingValue };
export type Options = Record<string, UsingValue>;
export type QualifiedName = { project: string | null; name: string };
/** Skills, agents and chatbots share their statements' shapes; each kind is its slice's own. */
type CreateResource<K extends string> = {
  kind: K;
  name: QualifiedName;
  ifNotExists: boolean;
  options: Options;
};
type UpdateResource<K extends string> = { kind: K; name: QualifiedName; options: Options };
type DropResource<K extends string> = { kind: K; name: QualifiedName; ifExists: boolean; forget: boolean };

/** ORDER BY … [GROUP BY …] [WINDOW n] [HORIZON h]; `orderBy` null when only the others were given. */
export type TimeSeriesClauses = {
  orderBy: string | null;
  groupBy: string[];
  window: number | null;
  horizon: number | null;
};

export type MindsStatement =
  | { kind: 'CreateProject'; name: string; ifNotExists: boolean }
  | { kind: 'DropProject'; name: string; ifExists: boolean }
  | {
      kind: 'CreateDatabase';
      name: string;
      ifNotExists: boolean;
      engine: string | null;
      parameters: Options | null;
    }
  | { kind: 'DropDatabase'; name: string; ifExists: boolean; forget: boolean }
  | CreateResource<'CreateSkill'>
  | CreateResource<'CreateAgent'>
  | CreateResource<'CreateChatbot'>
  | UpdateResource<'UpdateSkill'>
  | UpdateResource<'UpdateAgent'>
  | UpdateResource<'UpdateChatbot'>
  | DropResource<'DropSkill'>
  | DropResource<'DropAgent'>
  | DropResource<'DropChatbot'>
  | {
      kind: 'Show';
      what: string;
      full: boolean;
      from: string | null;
      like: string | null;
      where: string | null;
    }
  | { kind: 'Describe'; what: string | null; name: string[] }
  | {
      kind: 'CreateModel';
      name: QualifiedName;
      replace: boolean;
      ifNotExists: boolean;
      from: { database: string; query: string } | null;
      target: string;
      timeseries: TimeSeriesClauses | null;
      options: Options;
    }
  | {
      kind: 'RetrainModel';
      name: QualifiedName;
      from: { database: string; query: string } | null;
      target: string | null;
      /** As CREATE MODEL's (the JS SDK's retrain repeats them); null when none was given. */
      timeseries: TimeSeriesClauses | null;
      options: Options;
    }
  | {
      kind: 'FinetuneModel';
      /** `[project.]model[.version]`. */
      name: string[];
      from: { database: string; query: string };
      options: Options;
    }
  | { kind: 'DropModel'; name: string[]; ifExists: boolean }
  | { kind: 'CreateMlEngine'; name: string; handler: string; ifNotExists: boolean; options: Options }
  | { kind: 'DropMlEngine'; name: string; ifExists: boolean; forget: boolean }
  | { kind: 'CreateLlmBudget'; scope: 'user' | 'token' | 'project'; subject: string; options: Options }
  | { kind: 'DropLlmBudget'; scope: 'user' | 'token' | 'project'; subject: string; ifExists: boolean }
  | {
      kind: 'CreateKnowledgeBase';
      name: QualifiedName;
      replace: boolean;
      ifNotExists: boolean;
      /** `FROM (SELECT …)`: rows inserted once the knowledge base exists. */
      from: string | null;
      options: Options;
    }
  | { kind: 'DropKnowledgeBase'; name: QualifiedName; ifExists: boolean; forget: boolean }
  | { kind: 'EvaluateKnowledgeBase'; name: QualifiedName; options: Options }
  | {
      kind: 'EvaluateAgent';
      name: QualifiedName;
      /** The test set: a table (`db.table`, or one of the current database) or a SELECT. */
      from: { table: string } | { query: string };
      options: Options;
    }
  | { kind: 'CreateKnowledgeBaseIndex'; name: QualifiedName }
  | { kind: 'Insert'; target: QualifiedName; columns: string[] | null; body: string }
  | { kind: 'Delete'; target: QualifiedName; where: string | null }
  | {
      kind: 'CreateJob';
      name: QualifiedName;
      ifNotExists: boolean;
      /** The statements between the parentheses, as written. */
      query: string;
      start: string | null;
      end: string | null;
      every: { n: number | null; unit: string } | null;
      ifQuery: string | null;
    }
  | { kind: 'DropJob'; name: QualifiedName; ifExists: boolean; forget: boolean }
  | { kind: 'CreateView'; name: QualifiedName; replace: boolean; ifNotExists: boolean; query: string }
  | { kind: 'AlterView'; name: QualifiedName; query: string }
  | { kind: 'DropView'; name: QualifiedName; ifExists: boolean }
  | { kind: 'CreateTable'; target: QualifiedName; replace: boolean; body: string }
  | { kind: 'UpdateTable'; target: QualifiedName; set: string }
  | { kind: 'DropTable'; target: QualifiedName; ifExists: boolean }
  | {
      kind: 'CreateTrigger';
      name: QualifiedName;
      target: QualifiedName;
      columns: string[] | null;
      query: string;
    }
  | { kind: 'DropTrigger'; name: QualifiedName; ifExists: boolean; forget: boolean }
  | { kind: 'Use'; name: string }
  | { kind: 'Set'; text: string };

const parser = compiledParser(grammar);

type SyntaxProblem = { message: string; line: number; column: number };

export const parseMindsStatement = (sql: string): MindsStatement | SyntaxProblem => {
  try {
    return parser.parse(sql) as MindsStatement;
  } catch (error) {
    const e = error as { message: string; location?: { start: { line: number; column: number } } };
    return { message: e.message, line: e.location?.start.line ?? 1, column: e.location?.start.column ?? 1 };
  }
};

export const isSyntaxProblem = (x: MindsStatement | SyntaxProblem): x is SyntaxProblem => 'message' in x;
