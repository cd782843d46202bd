import type { SQLNamespace } from '@codemirror/lang-sql';
import { getJson, runSql, sqlRows, uploadFile } from './api';
import { fill, formatBytes, h, toast, type Child } from './dom';
import { fileTableName, ident, literal, trainingProgress } from './logic';

type Row = Record<string, unknown>;
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
const TRAINING = new Set(['generating', 'training', 'creating', 'pending', 'queued']);

const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));
const lower = (v: unknown) => str(v).toLowerCase();

/** Every list the tree shows, read from information_schema (and the files API for sizes). */
export const loadCatalog = async (): Promise<Catalog> => {
  const optional = (q: string) => sqlRows(q).catch(() => [] as Row[]);
  const [databases, models, agents, skills, chatbots, kbs, views, jobs, columns, files] = await Promise.all([
    sqlRows('SELECT NAME, TYPE, ENGINE FROM information_schema.DATABASES'),
    optional('SELECT * FROM information_schema.MODELS'),
    optional('SELECT NAME, PROJECT FROM information_schema.AGENTS'),
    optional('SELECT NAME, PROJECT, TYPE FROM information_schema.SKILLS'),
    optional('SELECT NAME, PROJECT, AGENT, IS_RUNNING FROM information_schema.CHATBOTS'),
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

export type SchemaTree = {
  refresh(): Promise<void>;
  readonly catalog: () => Catalog | null;
};

/**
 * The schema tree (projects → models, agents, skills, chatbots, knowledge bases, views, jobs; files;
 * external databases), file upload with progress, and live training progress.
 */
export const createTree = (
  parent: HTMLElement,
  actions: {
    insert(sql: string): void;
    schemaChanged(schema: SQLNamespace): void;
    openChat(project: string, agent: string): void;
  },
): SchemaTree => {
  let catalog: Catalog | null = null;
  const open = new Set<string>(['project:mindsdb', 'files']);
  const integrationTables = new Map<string, string[]>();
  let pollTimer: number | undefined;

  const treeEl = h('div', { class: 'tree', 'data-testid': 'schema-tree', role: 'tree' });
  const refreshButton = h(
    'button',
    { class: 'small', title: 'Reload the schema', 'data-testid': 'refresh-tree' },
    '↻',
  );
  const trainingEl = h('div', { class: 'training', 'data-testid': 'training' });

  // Upload: bytes sent (upload progress), then rows loaded (the answer).
  const fileInput = h('input', {
    type: 'file',
    accept: '.csv,.tsv,.json,.ndjson,.jsonl,.parquet,.txt',
    'data-testid': 'upload-input',
    'aria-label': 'File to upload',
  });
  const nameInput = h('input', {
    type: 'text',
    placeholder: 'table name',
    'data-testid': 'upload-name',
    'aria-label': 'Table name',
  });
  const uploadButton = h('button', { 'data-testid': 'upload-button' }, 'Upload');
  const progress = h('progress', { max: 100, value: 0, 'data-testid': 'upload-progress', hidden: true });
  const uploadStatus = h('div', { class: 'note', 'data-testid': 'upload-status', 'aria-live': 'polite' });
  fileInput.addEventListener('change', () => {
    const f = fileInput.files?.[0];
    if (f && !nameInput.value) nameInput.value = fileTableName(f.name);
  });
  uploadButton.addEventListener('click', () => {
    const file = fileInput.files?.[0];
    if (!file) return toast('Choose a file first', 'error');
    const name = nameInput.value.trim() || fileTableName(file.name);
    uploadButton.disabled = true;
    progress.hidden = false;
    progress.value = 0;
    progress.max = 100;
    uploadStatus.textContent = `Sending 0 of ${formatBytes(file.size)}`;
    void uploadFile(
      name,
      file,
      (sent, total) => {
        progress.value = total ? (sent / total) * 100 : 0;
        uploadStatus.textContent = `Sending ${formatBytes(sent)} of ${formatBytes(total)}`;
      },
      () => {
        progress.removeAttribute('value'); // indeterminate while the server loads the rows
        uploadStatus.textContent = 'Sent; loading rows…';
      },
    )
      .then(async (stored) => {
        progress.value = 100;
        uploadStatus.textContent = `files.${stored.name}: ${stored.row_count} rows loaded`;
        open.add('files');
        fileInput.value = '';
        nameInput.value = '';
        await refresh();
      })
      .catch((e: Error) => {
        progress.hidden = true;
        uploadStatus.textContent = `Upload failed: ${e.message}`;
        uploadStatus.classList.add('error');
      })
      .finally(() => {
        uploadButton.disabled = false;
      });
  });

  parent.append(
    h('div', { class: 'panel-title' }, h('span', {}, 'Schema'), refreshButton),
    treeEl,
    trainingEl,
    h(
      'div',
      { class: 'upload' },
      h('div', { class: 'panel-title' }, 'Upload a file'),
      fileInput,
      h('div', { class: 'row' }, nameInput, uploadButton),
      progress,
      uploadStatus,
    ),
  );

  /** A collapsible node whose open state survives refreshes. */
  const branch = (
    key: string,
    label: Child | Child[],
    children: () => Child[],
    attrs: Record<string, string> = {},
  ) => {
    const details = h('details', { 'data-key': key, ...attrs }, h('summary', {}, label));
    if (open.has(key)) {
      details.open = true;
      details.append(...children().filter((c): c is Node => c instanceof Node));
    }
    details.addEventListener('toggle', () => {
      if (details.open) {
        open.add(key);
        if (details.children.length === 1)
          details.append(...children().filter((c): c is Node => c instanceof Node));
      } else open.delete(key);
    });
    return details;
  };
  const leaf = (label: Child | Child[], sql: string, attrs: Record<string, string> = {}) =>
    h(
      'button',
      { class: 'leaf', title: sql, onclick: () => actions.insert(sql), role: 'treeitem', ...attrs },
      label,
    );

  const statusBadge = (status: string) => h('span', { class: `badge status-${status}` }, status);

  const modelNode = (project: string, name: string, versions: Row[]) => {
    const active =
      versions.find((v) => v.ACTIVE === true || v.ACTIVE === 'true') ?? versions[versions.length - 1]!;
    const p = trainingProgress(active);
    const accuracy = typeof active.ACCURACY === 'number' ? ` ${active.ACCURACY.toFixed(3)}` : '';
    const q = `SELECT * FROM ${ident(project)}.models WHERE name = ${literal(name)}`;
    const label = [
      h('span', { class: 'kind' }, 'model'),
      ` ${name}`,
      ' ',
      statusBadge(p.status),
      accuracy ? h('span', { class: 'acc', title: 'accuracy' }, accuracy) : null,
    ];
    const children = () => [
      leaf('describe', `DESCRIBE MODEL ${ident(project)}.${ident(name)}`),
      ...versions.map((v) =>
        leaf(
          [
            `v${str(v.VERSION)} `,
            statusBadge(trainingProgress(v).status),
            v.ACTIVE === true ? ' active' : '',
          ],
          `SELECT * FROM ${ident(project)}.models WHERE name = ${literal(name)} AND version = ${str(v.VERSION)}`,
        ),
      ),
    ];
    return h(
      'div',
      { class: 'model-node', 'data-model': `${project}.${name}`, 'data-status': p.status },
      leaf(label, q, { 'data-testid': `model-${project}-${name}` }),
      TRAINING.has(p.status) ? progressBar(p) : null,
      branch(
        `versions:${project}.${name}`,
        `${versions.length} version${versions.length === 1 ? '' : 's'}`,
        children,
      ),
    );
  };

  const progressBar = (p: ReturnType<typeof trainingProgress>) =>
    h(
      'div',
      { class: 'train-progress' },
      p.percent === null ? h('progress', {}) : h('progress', { max: 100, value: p.percent }),
      h(
        'span',
        { class: 'note' },
        [p.status, p.phase, p.percent === null ? null : `${p.percent}%`].filter(Boolean).join(' · '),
      ),
    );

  const render = () => {
    if (!catalog) return;
    const c = catalog;
    const inProject = (rows: Row[], project: string) =>
      rows.filter((r) => lower(r.PROJECT) === project.toLowerCase());
    const projects = c.projects.map((project) => {
      const models = inProject(c.models, project);
      const modelNames = [...new Set(models.map((m) => str(m.NAME)))];
      const agents = inProject(c.byProject.agents, project);
      const group = (key: string, title: string, count: number, items: () => Child[]) =>
        branch(`${key}:${project}`, [title, h('span', { class: 'count' }, ` ${count}`)], items);
      const simple = (table: string, rows: Row[], sql: (name: string) => string) =>
        rows.map((r) =>
          leaf(
            [` ${str(r.NAME)}`, r.TYPE ? h('span', { class: 'note' }, ` ${str(r.TYPE)}`) : null],
            sql(str(r.NAME)),
            { 'data-testid': `${table}-${project}-${str(r.NAME)}` },
          ),
        );
      const named = (table: string) => (name: string) =>
        `SELECT * FROM ${ident(project)}.${table} WHERE name = ${literal(name)}`;
      return branch(
        `project:${project}`,
        [h('span', { class: 'kind' }, 'project'), ` ${project}`],
        () => [
          group('models', 'Models', modelNames.length, () =>
            modelNames.map((n) =>
              modelNode(
                project,
                n,
                models.filter((m) => str(m.NAME) === n),
              ),
            ),
          ),
          group('agents', 'Agents', agents.length, () =>
            agents.map((a) =>
              h(
                'div',
                { class: 'row' },
                leaf(
                  ` ${str(a.NAME)}`,
                  `SELECT answer FROM ${ident(project)}.${ident(str(a.NAME))} WHERE question = 'Hello'`,
                  { 'data-testid': `agents-${project}-${str(a.NAME)}` },
                ),
                h(
                  'button',
                  {
                    class: 'small',
                    title: 'Chat with this agent',
                    onclick: () => actions.openChat(project, str(a.NAME)),
                  },
                  'chat',
                ),
              ),
            ),
          ),
          group('skills', 'Skills', inProject(c.byProject.skills, project).length, () =>
            simple('skills', inProject(c.byProject.skills, project), named('skills')),
          ),
          group('chatbots', 'Chatbots', inProject(c.byProject.chatbots, project).length, () =>
            simple('chatbots', inProject(c.byProject.chatbots, project), named('chatbots')),
          ),
          group('kbs', 'Knowledge bases', inProject(c.byProject.knowledge_bases, project).length, () =>
            simple(
              'kb',
              inProject(c.byProject.knowledge_bases, project),
              (n) => `SELECT * FROM ${ident(project)}.${ident(n)} WHERE content = 'search text' LIMIT 10`,
            ),
          ),
          group('views', 'Views', inProject(c.byProject.views, project).length, () =>
            simple(
              'views',
              inProject(c.byProject.views, project),
              (n) => `SELECT * FROM ${ident(project)}.${ident(n)} LIMIT 100`,
            ),
          ),
          group('jobs', 'Jobs', inProject(c.byProject.jobs, project).length, () =>
            simple('jobs', inProject(c.byProject.jobs, project), named('jobs')),
          ),
        ],
        { 'data-testid': `project-${project}` },
      );
    });
    const files = branch(
      'files',
      [h('span', { class: 'kind' }, 'db'), ' files', h('span', { class: 'count' }, ` ${c.files.length}`)],
      () =>
        c.files.map((f) =>
          leaf(
            [` ${f.name}`, h('span', { class: 'note' }, ` ${f.row_count} rows`)],
            `SELECT * FROM files.${ident(f.name)} LIMIT 100`,
            { 'data-testid': `file-${f.name}` },
          ),
        ),
      { 'data-testid': 'files' },
    );
    const integrations = c.integrations.map((db) => {
      const key = `db:${db.name}`;
      const details = branch(
        key,
        [h('span', { class: 'kind' }, 'db'), ` ${db.name}`, h('span', { class: 'note' }, ` ${db.engine}`)],
        () => {
          const tables = integrationTables.get(db.name);
          if (!tables) {
            void runSql(`SHOW TABLES FROM ${ident(db.name)}`).then((a) => {
              integrationTables.set(db.name, a.type === 'table' ? (a.data ?? []).map((r) => str(r[0])) : []);
              if (a.type === 'error') toast(`${db.name}: ${a.error_message ?? 'unreachable'}`, 'error');
              actions.schemaChanged(completionSchema(c, integrationTables));
              render();
            });
            return [h('span', { class: 'note' }, 'loading…')];
          }
          return tables.length
            ? tables.map((t) => leaf(` ${t}`, `SELECT * FROM ${ident(db.name)}.${ident(t)} LIMIT 100`))
            : [h('span', { class: 'note' }, 'no tables')];
        },
      );
      return details;
    });
    fill(
      treeEl,
      ...projects,
      files,
      integrations.length ? h('div', { class: 'tree-heading' }, 'External databases') : null,
      ...integrations,
    );
    const training = c.models.filter((m) => TRAINING.has(trainingProgress(m).status));
    fill(
      trainingEl,
      training.length ? h('div', { class: 'panel-title' }, 'Training') : null,
      training.map((m) =>
        h(
          'div',
          { class: 'training-item', 'data-testid': 'training-item' },
          `${str(m.PROJECT)}.${str(m.NAME)} v${str(m.VERSION)}`,
          progressBar(trainingProgress(m)),
        ),
      ),
    );
  };

  /** While a model trains, its row is read again every 1.5 s. */
  const schedulePoll = () => {
    window.clearTimeout(pollTimer);
    if (!catalog?.models.some((m) => TRAINING.has(trainingProgress(m).status))) return;
    pollTimer = window.setTimeout(() => {
      void sqlRows('SELECT * FROM information_schema.MODELS')
        .then((models) => {
          if (catalog) catalog = { ...catalog, models };
          render();
          schedulePoll();
        })
        .catch(() => schedulePoll());
    }, 1500);
  };

  const refresh = async () => {
    try {
      catalog = await loadCatalog();
    } catch (e) {
      fill(treeEl, h('p', { class: 'error' }, `Could not read the schema: ${(e as Error).message}`));
      return;
    }
    render();
    actions.schemaChanged(completionSchema(catalog, integrationTables));
    schedulePoll();
  };
  refreshButton.addEventListener('click', () => void refresh());
  return { refresh, catalog: () => catalog };
};
