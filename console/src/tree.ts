import type { SQLNamespace } from '@codemirror/lang-sql';
import { getJson, runSql, sqlRows } from './api';
import { completionSchema, loadCatalog, lower, str, type Catalog, type Row } from './catalog';
import { fill, h, toast, type Child } from './dom';
import {
  ident,
  isChatChannel,
  literal,
  liveProgress,
  parseServerTime,
  trainingProgress,
  type LiveProgress,
  type TrainingReport,
} from './logic';
import { createUpload } from './upload';

// The catalog queries live in ./catalog and the upload control in ./upload; this module keeps the
// rendering, the training poll and refresh. Re-exported so importers of ./tree see what they always did.
export { completionSchema, loadCatalog, type Catalog } from './catalog';

const TRAINING = new Set(['generating', 'training', 'creating', 'pending', 'queued']);
/** How often a training's row and its progress reports are read while it trains. */
const TRAINING_POLL_MS = 500;

type LoggedEvent = { position: number; type: string; data: Record<string, unknown> };
type EventPage = { events: LoggedEvent[]; next_after: number };

/** One training followed in the log: its version's position names its stream of reports. */
type Followed = {
  versionId: number | null;
  definedAt: number | null;
  report: TrainingReport | null;
  after: number;
};

const versionKey = (m: Row) => `${lower(m.PROJECT)}.${lower(m.NAME)}.${str(m.VERSION)}`;

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
  const followed = new Map<string, Followed>();

  const treeEl = h('div', { class: 'tree', 'data-testid': 'schema-tree', role: 'tree' });
  const refreshButton = h(
    'button',
    { class: 'small', title: 'Reload the schema', 'data-testid': 'refresh-tree' },
    '↻',
  );
  const trainingEl = h('div', { class: 'training', 'data-testid': 'training' });

  parent.append(
    h('div', { class: 'panel-title' }, h('span', {}, 'Schema'), refreshButton),
    treeEl,
    trainingEl,
    createUpload(async () => {
      open.add('files');
      await refresh();
    }),
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

  /** A version's progress: its row, moved on by the newest report in the log. */
  const progressOf = (m: Row): LiveProgress => {
    const f = followed.get(versionKey(m));
    const created = m.CREATED_AT ? parseServerTime(str(m.CREATED_AT)).getTime() : NaN;
    const since = f?.definedAt ?? (Number.isNaN(created) ? null : created);
    return liveProgress(m, f?.report ?? null, since, Date.now());
  };

  const modelNode = (project: string, name: string, versions: Row[]) => {
    // The newest version while it trains (what you are waiting for), else the active one.
    const newest = versions.reduce((a, b) => (Number(b.VERSION) > Number(a.VERSION) ? b : a));
    const active = TRAINING.has(trainingProgress(newest).status)
      ? newest
      : (versions.find((v) => v.ACTIVE === true || v.ACTIVE === 'true') ?? newest);
    const p = progressOf(active);
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
      TRAINING.has(p.status) ? progressBar(p, versionKey(active)) : null,
      branch(
        `versions:${project}.${name}`,
        `${versions.length} version${versions.length === 1 ? '' : 's'}`,
        children,
      ),
    );
  };

  const progressBar = (p: LiveProgress, key: string) =>
    h(
      'div',
      { class: 'train-progress', 'data-progress': key, 'data-percent': p.percent ?? '' },
      p.percent === null ? h('progress', {}) : h('progress', { max: 100, value: p.percent }),
      h(
        'span',
        { class: 'note', 'data-testid': 'training-progress' },
        [p.status, p.phase, p.percent === null ? null : `${p.percent}%`, p.elapsed]
          .filter(Boolean)
          .join(' · '),
      ),
    );

  /** A chat channel (Slack, Telegram, a webhook): what it is and the chatbots on it, never tables. */
  const channelNode = (c: Catalog, db: { name: string; engine: string }) => {
    const bots = c.byProject.chatbots.filter((b) => lower(b.DATABASE) === db.name.toLowerCase());
    return branch(
      `db:${db.name}`,
      [
        h('span', { class: 'kind' }, 'chat'),
        ` ${db.name}`,
        h('span', { class: 'note' }, ` ${db.engine} channel`),
      ],
      () => [
        h(
          'p',
          { class: 'note channel-note' },
          `A ${db.engine} chat channel: chatbots answer on it; it has no tables to query.`,
        ),
        ...(bots.length
          ? bots.map((b) =>
              leaf(
                [
                  h('span', { class: 'kind' }, 'chatbot'),
                  ` ${str(b.PROJECT)}.${str(b.NAME)}`,
                  h(
                    'span',
                    { class: 'note' },
                    ` ${b.IS_RUNNING === true || b.IS_RUNNING === 'true' ? 'running' : 'stopped'}${b.AGENT ? ` · agent ${str(b.AGENT)}` : ''}`,
                  ),
                ],
                `SELECT * FROM ${ident(str(b.PROJECT))}.chatbots WHERE name = ${literal(str(b.NAME))}`,
                { 'data-testid': `channel-bot-${db.name}-${str(b.NAME)}` },
              ),
            )
          : [h('p', { class: 'note' }, 'No chatbot uses it yet (CREATE CHATBOT … USING database = …).')]),
      ],
      { 'data-testid': `channel-${db.name}` },
    );
  };

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
    const channels = c.integrations.filter((db) => isChatChannel(db.engine)).map((db) => channelNode(c, db));
    const integrations = c.integrations
      .filter((db) => !isChatChannel(db.engine))
      .map((db) => {
        const key = `db:${db.name}`;
        const details = branch(
          key,
          [h('span', { class: 'kind' }, 'db'), ` ${db.name}`, h('span', { class: 'note' }, ` ${db.engine}`)],
          () => {
            const tables = integrationTables.get(db.name);
            if (!tables) {
              void runSql(`SHOW TABLES FROM ${ident(db.name)}`).then((a) => {
                integrationTables.set(
                  db.name,
                  a.type === 'table' ? (a.data ?? []).map((r) => str(r[0])) : [],
                );
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
      channels.length ? h('div', { class: 'tree-heading' }, 'Chat channels') : null,
      ...channels,
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
          progressBar(progressOf(m), versionKey(m)),
        ),
      ),
    );
  };

  /** The events of one stream after a position, every page of them. */
  const streamEvents = async (stream: string, after: number) => {
    const all: LoggedEvent[] = [];
    for (let from = after; ;) {
      const q = new URLSearchParams({ stream, after: String(from), limit: '1000' });
      const page = await getJson<EventPage>(`/api/events?${q}`);
      all.push(...page.events);
      if (page.events.length < 1000) return all;
      from = page.next_after;
    }
  };

  /**
   * The newest progress report of a training, read from the log: its reports are on the stream
   * `model-training-<position of the version's definition>`, which the project's stream names.
   */
  const follow = async (m: Row) => {
    const key = versionKey(m);
    const f = followed.get(key) ?? { versionId: null, definedAt: null, report: null, after: 0 };
    followed.set(key, f);
    if (f.versionId === null) {
      const defined = (await streamEvents(`project-${lower(m.PROJECT)}`, 0))
        .filter(
          (e) =>
            e.type === 'ModelVersionDefined' &&
            lower(e.data.name) === lower(m.NAME) &&
            str(e.data.version) === str(m.VERSION),
        )
        .at(-1);
      if (!defined) return;
      f.versionId = defined.position;
      const at = Date.parse(str(defined.data.definedAt));
      f.definedAt = Number.isNaN(at) ? null : at;
    }
    const reports = await streamEvents(`model-training-${f.versionId}`, f.after);
    for (const e of reports) {
      f.after = Math.max(f.after, e.position);
      if (e.type === 'ModelTrainingProgressed')
        f.report = { phase: str(e.data.phase), percent: Number(e.data.percent) };
    }
  };

  /** Every progress bar of a version (the tree's and the training panel's), drawn again in place. */
  const updateProgress = () => {
    for (const m of catalog?.models ?? []) {
      const key = versionKey(m);
      for (const el of treeEl.parentElement?.querySelectorAll<HTMLElement>('.train-progress') ?? [])
        if (el.dataset.progress === key) el.replaceWith(progressBar(progressOf(m), key));
    }
  };

  const statuses = (models: Row[]) => models.map((m) => `${versionKey(m)}=${str(m.STATUS)}`).join(',');

  /**
   * While a model trains, its row and the log's reports of its training are read twice a second:
   * the bars move in place; a status that changes (trained, failed) draws the tree again.
   */
  const schedulePoll = () => {
    window.clearTimeout(pollTimer);
    if (!catalog?.models.some((m) => TRAINING.has(trainingProgress(m).status))) return;
    pollTimer = window.setTimeout(() => {
      void sqlRows('SELECT * FROM information_schema.MODELS')
        .then(async (models) => {
          await Promise.all(
            models
              .filter((m) => TRAINING.has(trainingProgress(m).status))
              .map((m) => follow(m).catch(() => undefined)),
          );
          if (!catalog) return;
          const changed = statuses(models) !== statuses(catalog.models);
          catalog = { ...catalog, models };
          if (changed) render();
          else updateProgress();
        })
        .catch(() => undefined)
        .finally(() => schedulePoll());
    }, TRAINING_POLL_MS);
  };

  const refresh = async () => {
    try {
      catalog = await loadCatalog();
    } catch (e) {
      fill(treeEl, h('p', { class: 'error' }, `Could not read the schema: ${(e as Error).message}`));
      return;
    }
    // A training seen for the first time (a CREATE MODEL just run) opens its project's models.
    for (const m of catalog.models)
      if (TRAINING.has(trainingProgress(m).status) && !followed.has(versionKey(m))) {
        followed.set(versionKey(m), { versionId: null, definedAt: null, report: null, after: 0 });
        open.add(`project:${str(m.PROJECT)}`).add(`models:${str(m.PROJECT)}`);
      }
    render();
    actions.schemaChanged(completionSchema(catalog, integrationTables));
    schedulePoll();
  };
  refreshButton.addEventListener('click', () => void refresh());
  return { refresh, catalog: () => catalog };
};
