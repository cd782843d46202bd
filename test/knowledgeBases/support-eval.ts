import fs from 'node:fs';
import path from 'node:path';
import { querySql, type SqlAnswer, type TestApp } from '../support/app';

/** The shipped evaluation set (test/fixtures/kb-eval, written by its generate.ts). */
export const EVAL_DIR = path.join(__dirname, '..', 'fixtures', 'kb-eval');
export const evalFile = (name: 'documents.csv' | 'questions.csv') =>
  fs.readFileSync(path.join(EVAL_DIR, name));

let counter = 0;
export const unique = (prefix: string) => `${prefix}_${process.pid}_${++counter}`;

export const ok = async (t: TestApp, query: string) => {
  const answer = await querySql(t, query);
  if (answer.type === 'error') throw new Error(`${query.slice(0, 200)}: ${answer.error_message}`);
  return answer;
};

export const rowsOf = (answer: SqlAnswer) => {
  if (answer.type !== 'table') throw new Error(`expected a table, got ${JSON.stringify(answer)}`);
  const names = answer.column_names ?? [];
  return (answer.data ?? []).map((r) => Object.fromEntries(names.map((c, i) => [c, r[i]])));
};

/** The shipped questions.csv cut to its header and first `count` questions (one a line, no quotes). */
export const firstQuestions = (count: number) =>
  Buffer.from(
    evalFile('questions.csv')
      .toString('utf8')
      .split('\n')
      .slice(0, 1 + count)
      .join('\n') + '\n',
  );

/**
 * A project with a knowledge base (built-in embedder) holding the shipped documents, and the
 * shipped questions uploaded as a file: `files.<questions>` (question, doc_id, kind); only the
 * first `questionCount` of them when given (a test whose assertions do not depend on the set's
 * size: an evaluation searches each question, about 6 ms apiece).
 */
export const givenEvaluationWorld = async (t: TestApp, params = '', questionCount?: number) => {
  const project = unique('p');
  const kb = unique('kb');
  const documents = unique('eval_docs');
  const questions = unique('eval_questions');
  await t.http
    .put(`/api/files/${documents}`)
    .attach('file', evalFile('documents.csv'), `${documents}.csv`)
    .expect(200);
  await t.http
    .put(`/api/files/${questions}`)
    .attach(
      'file',
      questionCount === undefined ? evalFile('questions.csv') : firstQuestions(questionCount),
      `${questions}.csv`,
    )
    .expect(200);
  await ok(t, `CREATE PROJECT ${project}`);
  await ok(
    t,
    `CREATE KNOWLEDGE_BASE ${project}.${kb} USING content_columns = ['content'], id_column = 'id'${params}`,
  );
  await ok(t, `INSERT INTO ${project}.${kb} SELECT id, content FROM files.${documents}`);
  return { project, kb, documents, questions };
};

export const eventsOf = async (t: TestApp, stream: string) =>
  (
    (await t.http.get(`/api/events?stream=${stream}&limit=1000`).expect(200)).body as {
      events: { type: string; position: string | number; data: Record<string, unknown> }[];
    }
  ).events;

export const kbIdOf = async (t: TestApp, project: string, kb: string) =>
  ((await t.http.get(`/api/projects/${project}/knowledge_bases/${kb}`).expect(200)).body as { id: number })
    .id;

/**
 * A project with a two-record knowledge base (`a`: "Record alpha one.", `b`: "Record beta two.")
 * and a test table `files.<questions>` of two questions and `keyColumn` (doc_id or answer).
 */
export const givenTwoRecordKb = async (
  t: TestApp,
  names: { project: string; kb: string; questions: string },
  keyColumn: 'doc_id' | 'answer',
) => {
  const { project, kb, questions } = names;
  await t.http
    .put(`/api/files/${questions}`)
    .attach('file', Buffer.from(`question,${keyColumn}\nalpha one,a\nbeta two,b\n`), `${questions}.csv`)
    .expect(200);
  await ok(t, `CREATE PROJECT ${project}`);
  await ok(t, `CREATE KNOWLEDGE_BASE ${project}.${kb} USING content_columns = ['content'], id_column = 'id'`);
  await ok(
    t,
    `INSERT INTO ${project}.${kb} (id, content) VALUES ('a', 'Record alpha one.'), ('b', 'Record beta two.')`,
  );
};
