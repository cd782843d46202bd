import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { querySql, type TestApp } from './app';
import { mariadbParameters, postgresParameters } from './external';
import { propertyRuns, propertySeed } from './seed';

/**
 * Generated command sequences over every capability, applied through the HTTP API exactly as a
 * client sends them (REST, or the SQL endpoint's MindsDB statements). The names come from small
 * pools so that commands collide: duplicates, references to deleted resources and case twins are
 * what exercise the deciders' refusals and the projections' cascades. A refused command (4xx, or a
 * SQL error answer) stays in the sequence: the log must be rebuilt identically whatever was refused.
 */

/** `P1` names project `p1` (names are case-insensitive): URLs and SQL may spell it either way. */
const PROJECTS = ['mindsdb', 'p1', 'P1', 'p2'] as const;
/** The long name is longer than any string the tables held before (DuckDB plans bake in lengths). */
const SKILLS = ['s1', 'a_skill_with_a_much_longer_name_than_the_others', 's2', 's3'] as const;
const AGENTS = ['a1', 'a2'] as const;
const CHATBOTS = ['b1', 'b2'] as const;
/** `p2` clashes with the project of that name when both would exist (a 409). */
const DATABASES = ['d1', 'd2', 'p2'] as const;
const FILES = ['f1', 'f2'] as const;
const MODELS = ['m1', 'm2'] as const;
const ML_ENGINES = ['e1', 'e2'] as const;
const KNOWLEDGE_BASES = ['k1', 'k2'] as const;
const JOBS = ['j1', 'j2'] as const;
const VIEWS = ['v1', 'v2'] as const;
/** Documents knowledge base inserts pick from: ids repeat, so inserts replace and deletes meet them. */
const KB_DOCUMENTS = [
  {
    id: 'doc1',
    content: 'Refunds are accepted within thirty days of delivery.',
    topic: 'billing',
    year: 2021,
  },
  { id: 'doc2', content: 'Express shipping arrives the next business day.', topic: 'shipping', year: 2022 },
  {
    id: 'doc3',
    content: 'Refunds for damaged goods include the shipping cost.',
    topic: 'billing',
    year: 2023.5,
  },
  {
    id: 'doc1',
    content: 'Returns now close after fourteen days. '.repeat(4),
    topic: 'billing',
    year: 'late',
  },
] as const;
/** `b` is numeric in one file, `y` categorical in another, `v` in the JSON file; `nope` nowhere. */
const TARGETS = ['b', 'y', 'v', 'nope'] as const;

type Via = 'rest' | 'sql';
type Params = Record<string, unknown>;

export type Command =
  | { kind: 'createProject'; name: string; via: Via }
  | { kind: 'deleteProject'; name: string; via: Via }
  | { kind: 'createSkill'; project: string; name: string; skillType: 'text2sql' | 'custom'; via: Via }
  | { kind: 'putSkill'; project: string; name: string; rename?: string; params: Params }
  | { kind: 'updateSkillSql'; project: string; name: string; description: string }
  | { kind: 'deleteSkill'; project: string; name: string; via: Via }
  | { kind: 'createAgent'; project: string; name: string; skills: string[]; via: Via }
  | {
      kind: 'putAgent';
      project: string;
      name: string;
      rename?: string;
      add: string[];
      remove: string[];
      params?: Params;
    }
  | { kind: 'deleteAgent'; project: string; name: string; via: 'agents' | 'agent' | 'sql' }
  | {
      kind: 'createChatbot';
      project: string;
      name: string;
      agent: string | null;
      model: string | null;
      database: string;
      via: Via;
    }
  | {
      kind: 'putChatbot';
      project: string;
      name: string;
      rename?: string;
      agent?: string | null;
      database?: string;
      isRunning?: boolean;
      params?: Params;
    }
  | { kind: 'deleteChatbot'; project: string; name: string; via: Via }
  | { kind: 'putDatabase'; name: string; engine: 'postgres' | 'mariadb'; how: 'post' | 'put' | 'sql' }
  | { kind: 'deleteDatabase'; name: string; via: Via }
  | { kind: 'uploadFile'; name: string; fixture: number }
  | { kind: 'deleteFile'; name: string }
  | {
      kind: 'createModel';
      project: string;
      name: string;
      file: string;
      target: string;
      via: Via;
      replace: boolean;
    }
  | { kind: 'retrainModel'; project: string; name: string; active: boolean }
  | { kind: 'finetuneModel'; project: string; name: string; file: string }
  | { kind: 'putMlEngine'; name: string; how: 'sql' | 'byom-put' | 'byom-post' }
  | { kind: 'dropMlEngine'; name: string }
  | { kind: 'updateModel'; project: string; name: string; tag: string }
  | { kind: 'dropModel'; project: string; name: string; version: number | null; via: Via }
  | { kind: 'createKnowledgeBase'; project: string; name: string; chunkSize: number; via: Via }
  | { kind: 'insertKnowledgeBase'; project: string; name: string; documents: number[]; via: Via }
  | { kind: 'deleteKnowledgeBaseDocuments'; project: string; name: string; id: string }
  /** CREATE INDEX ON KNOWLEDGE_BASE: its postings compacted into term order (an event). */
  | { kind: 'indexKnowledgeBase'; project: string; name: string }
  | { kind: 'dropKnowledgeBase'; project: string; name: string; via: Via }
  | {
      kind: 'createJob';
      project: string;
      name: string;
      /** Repeats every minute (else runs once); its second statement fails; an IF that finds no rows. */
      every: boolean;
      failing: boolean;
      guarded: boolean;
      via: Via;
    }
  | { kind: 'dropJob'; project: string; name: string; via: Via }
  /** The scheduler looks for due jobs now (a job made with no START is due at once). */
  | { kind: 'runJobs' }
  /** A view of the project's skills, of a constant, or of the other view (refused when it is absent). */
  | {
      kind: 'createView';
      project: string;
      name: string;
      reads: 'skills' | 'constant' | 'view';
      replace: boolean;
      via: Via | 'put';
    }
  | { kind: 'dropView'; project: string; name: string; via: Via | 'drop-model' };

const via = fc.constantFrom<Via>('rest', 'sql');
/** Picks from a pool, the first names far more often: most commands then meet what others made. */
const weighted = <T>(...pool: readonly T[]) =>
  fc.oneof(
    ...pool.map((value, i) => ({ weight: 2 ** (pool.length - i - 1), arbitrary: fc.constant(value) })),
  );
const project = weighted(...PROJECTS);
/** Where project-scoped resources live: mostly the default project, so cascades and clashes meet. */
const scoped = weighted('mindsdb', 'p1', 'P1');
const skill = weighted(...SKILLS);
const agent = weighted(...AGENTS);
const chatbot = weighted(...CHATBOTS);
const database = weighted(...DATABASES);
const file = weighted(...FILES);
const model = weighted(...MODELS);
const mlEngine = weighted(...ML_ENGINES);
const knowledgeBase = weighted(...KNOWLEDGE_BASES);
const job = weighted(...JOBS);
const view = weighted(...VIEWS);
const target = weighted(...TARGETS);
const small = fc.constantFrom('x', 'y', 'z');
/** Free-form params with secrets (masked in every projection) and a key that `null` removes. */
const params = fc.record(
  {
    description: small,
    api_key: fc.constantFrom('sk-1', 'sk-2'),
    nested: fc.record({ level: fc.integer({ min: 0, max: 3 }), token: fc.constantFrom('t1', 't2') }),
    gone: fc.constant(null),
  },
  { requiredKeys: [] },
);

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('createProject' as const), name: project, via }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteProject' as const), name: project, via }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('createSkill' as const),
      project: scoped,
      name: skill,
      skillType: fc.constantFrom('text2sql' as const, 'custom' as const),
      via,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        kind: fc.constant('putSkill' as const),
        project: scoped,
        name: skill,
        rename: skill,
        params,
      },
      { requiredKeys: ['kind', 'project', 'name', 'params'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('updateSkillSql' as const),
      project: scoped,
      name: skill,
      description: small,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('deleteSkill' as const), project: scoped, name: skill, via }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('createAgent' as const),
      project: scoped,
      name: agent,
      skills: fc.uniqueArray(skill, { maxLength: 2 }),
      via,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        kind: fc.constant('putAgent' as const),
        project: scoped,
        name: agent,
        rename: agent,
        add: fc.uniqueArray(skill, { maxLength: 2 }),
        remove: fc.uniqueArray(skill, { maxLength: 1 }),
        params,
      },
      { requiredKeys: ['kind', 'project', 'name', 'add', 'remove'] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('deleteAgent' as const),
      project: scoped,
      name: agent,
      via: fc.constantFrom('agents' as const, 'agent' as const, 'sql' as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('createChatbot' as const),
      project: scoped,
      name: chatbot,
      agent: fc.option(agent, { nil: null, freq: 4 }),
      model: fc.option(model, { nil: null }),
      database,
      via,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        kind: fc.constant('putChatbot' as const),
        project: scoped,
        name: chatbot,
        rename: chatbot,
        agent: fc.option(agent, { nil: null, freq: 4 }),
        database,
        isRunning: fc.boolean(),
        params,
      },
      { requiredKeys: ['kind', 'project', 'name'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteChatbot' as const),
      project: scoped,
      name: chatbot,
      via,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('putDatabase' as const),
      name: database,
      engine: fc.constantFrom('postgres' as const, 'mariadb' as const),
      how: fc.constantFrom('post' as const, 'put' as const, 'sql' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteDatabase' as const),
      name: database,
      via,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('uploadFile' as const),
      name: file,
      fixture: fc.integer({ min: 0, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('deleteFile' as const), name: file }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('createModel' as const),
      project: scoped,
      name: model,
      file,
      target,
      via,
      replace: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('retrainModel' as const),
      project: scoped,
      name: model,
      active: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('finetuneModel' as const),
      project: scoped,
      name: model,
      file,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('putMlEngine' as const),
      name: mlEngine,
      how: fc.constantFrom('sql' as const, 'byom-put' as const, 'byom-post' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('dropMlEngine' as const), name: mlEngine }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('updateModel' as const),
      project: scoped,
      name: model,
      tag: small,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('dropModel' as const),
      project: scoped,
      name: model,
      version: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
      via,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('createKnowledgeBase' as const),
      project: scoped,
      name: knowledgeBase,
      chunkSize: fc.constantFrom(40, 1000),
      via,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('insertKnowledgeBase' as const),
      project: scoped,
      name: knowledgeBase,
      documents: fc.uniqueArray(fc.nat(KB_DOCUMENTS.length - 1), { minLength: 1, maxLength: 3 }),
      via,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteKnowledgeBaseDocuments' as const),
      project: scoped,
      name: knowledgeBase,
      id: fc.constantFrom('doc1', 'doc2', 'doc3'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('indexKnowledgeBase' as const),
      project: scoped,
      name: knowledgeBase,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('dropKnowledgeBase' as const),
      project: scoped,
      name: knowledgeBase,
      via,
    }),
  },
);

/**
 * Jobs' commands, drawn after the others (see `commandSequence`): made, dropped, and the scheduler
 * looking for due jobs (a job made with no START is due at once).
 */
const jobCommand: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('createJob' as const),
      project: scoped,
      name: job,
      every: fc.boolean(),
      failing: fc.boolean(),
      guarded: fc.boolean(),
      via,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('dropJob' as const), project: scoped, name: job, via }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('runJobs' as const) }) },
);

/** Views' commands, drawn after the jobs' (see `commandSequence`). */
const viewCommand: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('createView' as const),
      project: scoped,
      name: view,
      reads: fc.constantFrom('skills' as const, 'constant' as const, 'view' as const),
      replace: fc.boolean(),
      via: fc.constantFrom<Via | 'put'>('rest', 'sql', 'put'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('dropView' as const),
      project: scoped,
      name: view,
      via: fc.constantFrom<Via | 'drop-model'>('rest', 'sql', 'drop-model'),
    }),
  },
);

/**
 * A world to start from, in an order where each step can succeed: a project, a file, a database,
 * skills, agents using them, a chatbot and a model. Each step is optional (it shrinks away when a
 * failure does not need it) and generated like any other command (REST or SQL, names, options).
 */
const some = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null, freq: 6 });
const skillType = fc.constantFrom('text2sql' as const, 'custom' as const);
export const startingWorld: fc.Arbitrary<Command[]> = fc
  .record({
    home: fc.constantFrom('mindsdb', 'p1', 'P1'),
    project: some(via),
    file: some(fc.constantFrom(0, 3)),
    database: some(
      fc.record({
        engine: fc.constantFrom('postgres' as const, 'mariadb' as const),
        how: fc.constantFrom('post' as const, 'put' as const, 'sql' as const),
      }),
    ),
    skills: fc.uniqueArray(fc.record({ name: skill, skillType, via }), {
      selector: (x) => x.name,
      maxLength: 3,
    }),
    agents: fc.uniqueArray(
      fc.record({ name: agent, uses: fc.uniqueArray(fc.nat(2), { minLength: 1, maxLength: 2 }), via }),
      { selector: (x) => x.name, maxLength: 2 },
    ),
    model: some(fc.record({ name: model, via })),
    chatbot: some(fc.record({ name: chatbot, agent: fc.nat(1), via })),
  })
  .map((w): Command[] => {
    const commands: Command[] = [];
    if (w.project) commands.push({ kind: 'createProject', name: 'p1', via: w.project });
    if (w.file !== null) commands.push({ kind: 'uploadFile', name: 'f1', fixture: w.file });
    if (w.database) commands.push({ kind: 'putDatabase', name: 'd1', ...w.database });
    for (const x of w.skills) commands.push({ kind: 'createSkill', project: w.home, ...x });
    for (const x of w.agents) {
      const skills = [
        ...new Set(x.uses.flatMap((i) => (w.skills.length ? [w.skills[i % w.skills.length]!.name] : []))),
      ];
      commands.push({ kind: 'createAgent', project: w.home, name: x.name, skills, via: x.via });
    }
    if (w.model)
      commands.push({
        kind: 'createModel',
        project: w.home,
        name: w.model.name,
        file: 'f1',
        target: 'b',
        via: w.model.via,
        replace: false,
      });
    if (w.chatbot) {
      const agentName = w.agents.length ? w.agents[w.chatbot.agent % w.agents.length]!.name : null;
      commands.push({
        kind: 'createChatbot',
        project: w.home,
        name: w.chatbot.name,
        agent: agentName,
        model: agentName === null ? (w.model?.name ?? null) : null,
        database: 'd1',
        via: w.chatbot.via,
      });
    }
    return commands;
  });

/**
 * A command sequence: a generated starting world, then up to `maxLength` commands of any kind in any
 * order. Lengths span the whole range (fast-check's default size would stop near 10), and every
 * command can shrink away, so a counterexample keeps only the commands its failure needs.
 */
export const commandSequence = (options: { maxLength: number }) =>
  fc
    .tuple(
      startingWorld,
      fc.array(command, { maxLength: options.maxLength, size: 'max' }),
      // Drawn last, so the sequences of the other commands are those a seed gave before jobs came;
      // each job command is put in among them at a generated place.
      fc.array(fc.tuple(fc.nat(), jobCommand), { maxLength: Math.ceil(options.maxLength / 3) }),
      // Views came after jobs: drawn after them, put in the same way.
      fc.array(fc.tuple(fc.nat(), viewCommand), { maxLength: Math.ceil(options.maxLength / 4) }),
    )
    .map(([first, then, jobs, views]) => {
      const mixed = [...then];
      for (const [at, c] of jobs) mixed.splice(at % (mixed.length + 1), 0, c);
      for (const [at, c] of views) mixed.splice(at % (mixed.length + 1), 0, c);
      return [...first, ...mixed];
    });

/** Commands whose answers are quick (no training): for tests that interleave many queries. */
export const quickCommand = command.filter(
  (c) => !['createModel', 'retrainModel', 'finetuneModel', 'uploadFile'].includes(c.kind),
);

/** One line per command, for failure messages (and fast-check's counterexample). */
export const describeCommand = (c: Command) => {
  const { kind, ...rest } = c;
  return `${kind} ${JSON.stringify(rest)}`;
};

/**
 * The files commands upload (written once per process). Two shapes of CSV and a JSON array, plus a
 * second version of the first CSV, so that replacing a file changes its content and types.
 */
const fixtureDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-promise-'));
const fixtures: string[] = [
  [
    'num.csv',
    'a,b,c\n' +
      Array.from({ length: 30 }, (_, i) => `${i},${i * 2 + 1},${i % 3 === 0 ? 'x' : 'y'}`).join('\n') +
      '\n',
  ],
  [
    'cat.csv',
    'x;y\n' +
      Array.from({ length: 24 }, (_, i) => `${i % 7};${i % 2 === 0 ? 'even' : 'odd'}`).join('\n') +
      '\n',
  ],
  [
    'rows.json',
    JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ k: i, v: i / 4, t: i % 2 ? 'u' : 'w' }))),
  ],
  [
    'num2.csv',
    'a,b,c\n' + Array.from({ length: 25 }, (_, i) => `${i},${30 - i},${i % 2 ? 'q' : 'r'}`).join('\n') + '\n',
  ],
].map(([name, text]) => {
  const file = path.join(fixtureDir, name!);
  fs.writeFileSync(file, text!);
  return file;
});

/** What one command answered: an HTTP status, or the SQL answer's type and error code. */
export type Outcome = {
  status: number;
  sql?: { type: string; error_code?: number };
  /** Why it was refused (the problem's or the SQL error's message). */
  detail?: string;
};

const sqlOutcome = async (t: TestApp, query: string): Promise<Outcome> => {
  const answer = await querySql(t, query);
  return {
    status: 200,
    sql: { type: answer.type, ...(answer.error_code === undefined ? {} : { error_code: answer.error_code }) },
    ...(answer.error_message ? { detail: answer.error_message } : {}),
  };
};

const str = (s: string) => `'${s.replace(/'/g, "''")}'`;
const databaseParameters = (engine: 'postgres' | 'mariadb') =>
  engine === 'postgres' ? postgresParameters() : mariadbParameters();

/** Training waits (join_learn_process): each command's events are in the log before the next starts. */
const modelSource = (file: string, target: string) =>
  `FROM files (SELECT * FROM ${file}) PREDICT ${target} USING join_learn_process = true`;

/** Applies one command through the API, as a MindsDB client would send it, and says how it ended. */
export const applyCommand = async (t: TestApp, c: Command): Promise<Outcome> => {
  const http = t.http;
  const status = async (request: PromiseLike<{ status: number; body: unknown }>): Promise<Outcome> => {
    const res = await request;
    const detail = (res.body as { detail?: unknown } | undefined)?.detail;
    return { status: res.status, ...(res.status >= 300 && typeof detail === 'string' ? { detail } : {}) };
  };
  switch (c.kind) {
    case 'createProject':
      return c.via === 'rest'
        ? status(http.post('/api/projects').send({ name: c.name }))
        : sqlOutcome(t, `CREATE PROJECT ${c.name}`);
    case 'deleteProject':
      return c.via === 'rest'
        ? status(http.delete(`/api/projects/${c.name}`))
        : sqlOutcome(t, `DROP PROJECT ${c.name}`);
    case 'createSkill': {
      const p: Params =
        c.skillType === 'text2sql'
          ? { database: 'files', tables: ['f1'], description: 'files' }
          : { api_key: 'sk-secret', depth: { token: 'inner' } };
      if (c.via === 'rest')
        return status(
          http
            .post(`/api/projects/${c.project}/skills`)
            .send({ skill: { name: c.name, type: c.skillType, params: p } }),
        );
      return sqlOutcome(
        t,
        c.skillType === 'text2sql'
          ? `CREATE SKILL ${c.project}.${c.name} USING type = 'text2sql', database = 'files', tables = ['f1'], description = 'files'`
          : `CREATE SKILL ${c.project}.${c.name} USING type = 'custom', api_key = 'sk-secret', depth = {"token": "inner"}`,
      );
    }
    case 'putSkill':
      return status(
        http
          .put(`/api/projects/${c.project}/skills/${c.name}`)
          .send({ skill: { ...(c.rename ? { name: c.rename } : {}), type: 'custom', params: c.params } }),
      );
    case 'updateSkillSql':
      return sqlOutcome(t, `UPDATE SKILL ${c.project}.${c.name} SET description = ${str(c.description)}`);
    case 'deleteSkill':
      return c.via === 'rest'
        ? status(http.delete(`/api/projects/${c.project}/skills/${c.name}`))
        : sqlOutcome(t, `DROP SKILL ${c.project}.${c.name}`);
    case 'createAgent':
      if (c.via === 'rest')
        return status(
          http.post(`/api/projects/${c.project}/agents`).send({
            agent: {
              name: c.name,
              model_name: 'gpt-4o',
              provider: 'openai',
              params: { api_key: 'sk-agent' },
              skills: c.skills,
            },
          }),
        );
      return sqlOutcome(
        t,
        `CREATE AGENT ${c.project}.${c.name} USING model = {"provider": "openai", "model_name": "gpt-4o", "api_key": "sk-sql"}, skills = [${c.skills.map(str).join(', ')}], prompt_template = 'Answer'`,
      );
    case 'putAgent':
      return status(
        http.put(`/api/projects/${c.project}/agents/${c.name}`).send({
          agent: {
            ...(c.rename ? { name: c.rename } : {}),
            ...(c.params ? { params: c.params } : {}),
            skills_to_add: c.add,
            skills_to_remove: c.remove,
          },
        }),
      );
    case 'deleteAgent':
      return c.via === 'sql'
        ? sqlOutcome(t, `DROP AGENT ${c.project}.${c.name}`)
        : status(http.delete(`/api/projects/${c.project}/${c.via}/${c.name}`));
    case 'createChatbot':
      if (c.via === 'rest')
        return status(
          http.post(`/api/projects/${c.project}/chatbots`).send({
            chatbot: {
              name: c.name,
              database_name: c.database,
              ...(c.agent ? { agent_name: c.agent } : {}),
              ...(c.model ? { model_name: c.model } : {}),
              params: { webhook_token: 'hook' },
            },
          }),
        );
      return sqlOutcome(
        t,
        `CREATE CHATBOT ${c.project}.${c.name} USING database = ${str(c.database)}${
          c.agent ? `, agent = ${str(c.agent)}` : ''
        }${c.model ? `, model = ${str(c.model)}` : ''}, greeting = 'hi'`,
      );
    case 'putChatbot':
      return status(
        http.put(`/api/projects/${c.project}/chatbots/${c.name}`).send({
          chatbot: {
            ...(c.rename ? { name: c.rename } : {}),
            ...(c.agent !== undefined ? { agent_name: c.agent } : {}),
            ...(c.database ? { database_name: c.database } : {}),
            ...(c.isRunning !== undefined ? { is_running: c.isRunning } : {}),
            ...(c.params ? { params: c.params } : {}),
          },
        }),
      );
    case 'deleteChatbot':
      return c.via === 'rest'
        ? status(http.delete(`/api/projects/${c.project}/chatbots/${c.name}`))
        : sqlOutcome(t, `DROP CHATBOT ${c.project}.${c.name}`);
    case 'putDatabase': {
      const parameters = databaseParameters(c.engine);
      if (c.how === 'sql')
        return sqlOutcome(
          t,
          `CREATE DATABASE ${c.name} WITH ENGINE = '${c.engine}', PARAMETERS = ${JSON.stringify(parameters)}`,
        );
      if (c.how === 'post')
        return status(
          http.post('/api/databases').send({ database: { name: c.name, engine: c.engine, parameters } }),
        );
      return status(
        http.put(`/api/databases/${c.name}`).send({ database: { engine: c.engine, parameters } }),
      );
    }
    case 'deleteDatabase':
      return c.via === 'rest'
        ? status(http.delete(`/api/databases/${c.name}`))
        : sqlOutcome(t, `DROP DATABASE ${c.name}`);
    case 'uploadFile':
      return status(http.put(`/api/files/${c.name}`).attach('file', fixtures[c.fixture]!));
    case 'deleteFile':
      return status(http.delete(`/api/files/${c.name}`));
    case 'createModel': {
      const create = `CREATE ${c.replace ? 'OR REPLACE ' : ''}MODEL`;
      if (c.via === 'sql')
        return sqlOutcome(t, `${create} ${c.project}.${c.name} ${modelSource(c.file, c.target)}`);
      const outcome = await status(
        http
          .post(`/api/projects/${c.project}/models`)
          .send({ query: `${create} ${c.name} ${modelSource(c.file, c.target)}` }),
      );
      // REST trains in the background: wait, so the sequence's log is the same on every run.
      await t.running.services.models.idle();
      return outcome;
    }
    case 'retrainModel':
      return sqlOutcome(
        t,
        `RETRAIN ${c.project}.${c.name} USING join_learn_process = true${c.active ? '' : ', active = false'}`,
      );
    case 'finetuneModel':
      return sqlOutcome(
        t,
        `FINETUNE ${c.project}.${c.name} FROM files (SELECT * FROM ${c.file}) USING join_learn_process = true`,
      );
    case 'putMlEngine': {
      if (c.how === 'sql')
        return sqlOutcome(t, `CREATE ML_ENGINE ${c.name} FROM openai USING openai_api_key = 'sk-engine'`);
      const upload =
        c.how === 'byom-put'
          ? http.put(`/api/handlers/byom/${c.name}`)
          : http.post(`/api/handlers/byom/${c.name}`);
      return status(
        upload
          .attach('code', Buffer.from(`class CustomPredictor:  # ${c.how}\n    pass\n`), 'model.py')
          .attach('modules', Buffer.from('pandas\n'), 'requirements.txt')
          .field('type', 'inhouse'),
      );
    }
    case 'dropMlEngine':
      return sqlOutcome(t, `DROP ML_ENGINE ${c.name}`);
    case 'updateModel':
      return status(
        http
          .put(`/api/projects/${c.project}/models/${c.name}`)
          .send({ problem_definition: { using: { tag: c.tag } } }),
      );
    case 'dropModel': {
      const name = c.version === null ? c.name : `${c.name}.${c.version}`;
      return c.via === 'rest'
        ? status(http.delete(`/api/projects/${c.project}/models/${name}`))
        : sqlOutcome(t, `DROP MODEL ${c.project}.${name}`);
    }
    case 'createKnowledgeBase': {
      const params = { chunk_size: c.chunkSize, chunk_overlap: 10 };
      return c.via === 'sql'
        ? sqlOutcome(
            t,
            `CREATE KNOWLEDGE_BASE ${c.project}.${c.name} USING params = ${JSON.stringify(params)}`,
          )
        : status(
            http
              .post(`/api/projects/${c.project}/knowledge_bases`)
              .send({ knowledge_base: { name: c.name, params } }),
          );
    }
    case 'insertKnowledgeBase': {
      const rows = c.documents.map((i) => KB_DOCUMENTS[i]!);
      if (c.via === 'rest')
        return status(
          http.put(`/api/projects/${c.project}/knowledge_bases/${c.name}`).send({ knowledge_base: { rows } }),
        );
      const values = rows
        .map(
          (r) =>
            `(${str(r.id)}, ${str(r.content)}, ${str(r.topic)}, ${typeof r.year === 'number' ? r.year : str(r.year)})`,
        )
        .join(', ');
      return sqlOutcome(t, `INSERT INTO ${c.project}.${c.name} (id, content, topic, year) VALUES ${values}`);
    }
    case 'deleteKnowledgeBaseDocuments':
      return sqlOutcome(t, `DELETE FROM ${c.project}.${c.name} WHERE id = ${str(c.id)}`);
    case 'indexKnowledgeBase':
      return sqlOutcome(t, `CREATE INDEX ON KNOWLEDGE_BASE ${c.project}.${c.name}`);
    case 'dropKnowledgeBase':
      return c.via === 'rest'
        ? status(http.delete(`/api/projects/${c.project}/knowledge_bases/${c.name}`))
        : sqlOutcome(t, `DROP KNOWLEDGE_BASE ${c.project}.${c.name}`);
    case 'createJob': {
      const query = c.failing ? 'SELECT 1; SELECT * FROM nowhere.t' : 'SELECT 1';
      const ifQuery = c.guarded ? 'SELECT 1 WHERE 1 = 0' : null;
      if (c.via === 'rest')
        return status(
          http.post(`/api/projects/${c.project}/jobs`).send({
            job: { name: c.name, query, if_query: ifQuery, schedule_str: c.every ? 'every minute' : null },
          }),
        );
      return sqlOutcome(
        t,
        `CREATE JOB ${c.project}.${c.name} (${query})${c.every ? ' EVERY minute' : ''}${ifQuery ? ` IF (${ifQuery})` : ''}`,
      );
    }
    case 'dropJob':
      return c.via === 'rest'
        ? status(http.delete(`/api/projects/${c.project}/jobs/${c.name}`))
        : sqlOutcome(t, `DROP JOB ${c.project}.${c.name}`);
    case 'runJobs':
      await t.running.jobs.tick();
      return { status: 200 };
    case 'createView': {
      const other = c.name === 'v1' ? 'v2' : 'v1';
      const query =
        c.reads === 'skills'
          ? "SELECT name, type FROM skills WHERE type <> 'x'"
          : c.reads === 'constant'
            ? `SELECT '${c.name}' AS label`
            : `SELECT COUNT(*) AS n FROM ${other}`;
      if (c.via === 'put')
        return status(http.put(`/api/projects/${c.project}/views/${c.name}`).send({ view: { query } }));
      if (c.via === 'rest' && !c.replace)
        return status(http.post(`/api/projects/${c.project}/views`).send({ view: { name: c.name, query } }));
      return sqlOutcome(
        t,
        `CREATE ${c.replace ? 'OR REPLACE ' : ''}VIEW ${c.project}.${c.name} AS (${query})`,
      );
    }
    case 'dropView':
      if (c.via === 'rest') return status(http.delete(`/api/projects/${c.project}/views/${c.name}`));
      return sqlOutcome(t, `DROP ${c.via === 'drop-model' ? 'MODEL' : 'VIEW'} ${c.project}.${c.name}`);
    default: {
      const _exhaustive: never = c;
      return _exhaustive;
    }
  }
};

/**
 * A command that answers 5xx, 202 (its events not projected in time) or SQL error 1105 (an
 * unclassified failure) is a bug whatever the sequence: refusals are 4xx or precise SQL errors.
 */
export const isHealthy = (o: Outcome) =>
  o.status < 500 && o.status !== 202 && !(o.sql?.type === 'error' && o.sql.error_code === 1105);

/**
 * Applies the commands through the given apps in turn (command i goes to app i mod n), returning a
 * transcript. `together`: each round of n commands is sent at once, one per app, so appends from
 * different processes race (on PostgreSQL, positions then commit out of order).
 */
export const applyAll = async (
  apps: readonly TestApp[],
  commands: readonly Command[],
  options: { together?: boolean } = {},
) => {
  const transcript: string[] = [];
  const unhealthy: string[] = [];
  const run = async (i: number) => {
    const c = commands[i]!;
    const outcome = await applyCommand(apps[i % apps.length]!, c);
    const line = `${apps.length > 1 ? `[app ${i % apps.length}] ` : ''}${describeCommand(c)} -> ${
      outcome.sql
        ? `sql ${outcome.sql.type}${outcome.sql.error_code ? ` ${outcome.sql.error_code}` : ''}`
        : outcome.status
    }${outcome.detail ? ` (${outcome.detail.slice(0, 160)})` : ''}`;
    return { line, healthy: isHealthy(outcome) };
  };
  const step = options.together ? apps.length : 1;
  for (let i = 0; i < commands.length; i += step) {
    const round = [];
    for (let j = i; j < Math.min(i + step, commands.length); j++) round.push(run(j));
    for (const { line, healthy } of await Promise.all(round)) {
      transcript.push(step > 1 ? `${line}  [sent together]` : line);
      if (!healthy) unhealthy.push(line);
    }
  }
  return { transcript, unhealthy };
};

/**
 * fast-check settings of the promise properties: a fresh seed each run, printed (PROMISE_SEED repeats
 * one), and a number of runs (PROMISE_RUNS sets it, PROMISE_SCALE multiplies it: test/support/seed.ts).
 * Shrinking a failure starts an app per attempt and can take minutes, more when the failure is a race:
 * past the time limit fast-check stops and reports the smallest counterexample found so far, within
 * the test's own timeout.
 */
export const propertySettings = (runs: number) => ({
  seed: propertySeed(),
  numRuns: propertyRuns(runs),
  interruptAfterTimeLimit: 200_000,
});
/** Jest's limit for one property test: the time limit above, plus the run under way and cleanup. */
export const PROPERTY_TIMEOUT_MS = 300_000;
