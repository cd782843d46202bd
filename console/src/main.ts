import './styles.css';
import {
  authEnabled,
  getJson,
  login,
  logout,
  onSignInRequired,
  runSql,
  SignInRequired,
  type Me,
  type Status,
} from './api';
import { createAudit } from './audit';
import { createChat } from './chat';
import { createConnect } from './connect';
import { fill, h, toast } from './dom';
import { createEditor } from './editor';
import { createHistory, readHistory, remember } from './history';
import { capabilities } from './logic';
import { createResults } from './results';
import { createTree } from './tree';

type View = 'query' | 'chat' | 'audit' | 'history' | 'connect';

const app = document.getElementById('app')!;
const tabs = new Map<View, HTMLButtonElement>();
const views = new Map<View, HTMLElement>();
const nav = h('nav', { class: 'views', 'aria-label': 'Views' });
const userBox = h('div', { class: 'user' });
const schemaToggle = h(
  'button',
  { class: 'schema-toggle', 'data-testid': 'schema-toggle', 'aria-expanded': 'false' },
  'Schema',
);
app.append(h('header', {}, h('h1', {}, 'mindledger'), schemaToggle, nav, userBox));
const main = h('main', {});
app.append(main);

const show = (view: View) => {
  for (const [v, el] of views) el.hidden = v !== view;
  for (const [v, t] of tabs) {
    t.classList.toggle('active', v === view);
    t.setAttribute('aria-selected', String(v === view));
  }
  if (view === 'history') history.render();
  if (view === 'audit') void audit.reload();
  if (view === 'connect')
    void connect
      .load({ signInOn: authOn, projects: tree.catalog()?.projects ?? [] })
      .catch((e: Error) => toast(e.message, 'error'));
  document.body.dataset.view = view;
};
for (const [view, label] of [
  ['query', 'Query'],
  ['chat', 'Chat'],
  ['audit', 'Audit'],
  ['history', 'History'],
  ['connect', 'Connect AI'],
] as const) {
  const tab = h(
    'button',
    { class: 'tab', role: 'tab', 'data-testid': `view-${view}`, onclick: () => show(view) },
    label,
  );
  tabs.set(view, tab);
  nav.append(tab);
  const section = h('section', { class: `view view-${view}`, 'data-view': view });
  views.set(view, section);
  main.append(section);
}

// Query view: schema tree beside the editor and the result.
const queryView = views.get('query')!;
const aside = h('aside', { class: 'sidebar', 'data-testid': 'sidebar' });
const work = h('div', { class: 'work' });
queryView.append(aside, work);
schemaToggle.addEventListener('click', () => {
  const openNow = !document.body.classList.contains('schema-open');
  document.body.classList.toggle('schema-open', openNow);
  schemaToggle.setAttribute('aria-expanded', String(openNow));
  show('query');
});

const editorHost = h('div', { class: 'editor', 'data-testid': 'editor' });
const runButton = h('button', { class: 'primary', 'data-testid': 'run', title: 'Ctrl+Enter' }, '▶ Run');
const runInfo = h(
  'span',
  { class: 'note' },
  'Ctrl+Enter runs the statement under the cursor (or the selection)',
);
const resultHost = h('div', { class: 'results', 'data-testid': 'results' });
work.append(editorHost, h('div', { class: 'toolbar' }, runButton, runInfo), resultHost);
const results = createResults(resultHost);

let running = false;
const run = async () => {
  editor.closeCompletion();
  const statement = editor.currentStatement();
  if (!statement || running) return;
  running = true;
  runButton.disabled = true;
  runButton.textContent = '… Running';
  const started = performance.now();
  try {
    const answer = await runSql(statement);
    const ms = Math.round(performance.now() - started);
    results.show(answer, ms);
    remember({
      sql: statement,
      at: new Date().toISOString(),
      ok: answer.type !== 'error',
      ms,
      rows: answer.type === 'table' ? (answer.data?.length ?? 0) : null,
    });
    // DDL changes the tree (CREATE MODEL starts training: the tree follows it).
    if (answer.type !== 'error' && !/^\s*(SELECT|SHOW|DESCRIBE|DESC|EXPLAIN|WITH)\b/i.test(statement))
      void tree.refresh();
  } catch (e) {
    if (!(e instanceof SignInRequired)) toast((e as Error).message, 'error');
  } finally {
    running = false;
    runButton.disabled = false;
    runButton.textContent = '▶ Run';
  }
};
runButton.addEventListener('click', () => void run());

const lastQuery = readHistory()[0]?.sql;
const editor = createEditor(
  editorHost,
  lastQuery ? `${lastQuery};\n` : 'SHOW DATABASES;\n',
  () => void run(),
);

const chat = createChat(views.get('chat')!, (sql) => {
  editor.insertStatement(sql);
  show('query');
});
const audit = createAudit(views.get('audit')!);
const connect = createConnect(views.get('connect')!);
const history = createHistory(views.get('history')!, (sql) => {
  editor.setText(`${sql};\n`);
  show('query');
});
const tree = createTree(aside, {
  insert: (sql) => {
    editor.insertStatement(sql);
    document.body.classList.remove('schema-open');
  },
  schemaChanged: (schema) => {
    editor.setSchema(schema);
    const c = tree.catalog();
    if (c)
      chat.setAgents(c.byProject.agents.map((a) => ({ project: String(a.PROJECT), name: String(a.NAME) })));
  },
  openChat: (project, agent) => {
    show('chat');
    chat.select(project, agent);
  },
});

// Sign-in: shown when the server has auth on and a request answered 401.
let signInShown = false;
const showSignIn = (message = '') => {
  if (signInShown) return;
  signInShown = true;
  const username = h('input', {
    type: 'text',
    name: 'username',
    autocomplete: 'username',
    required: true,
    'data-testid': 'login-username',
    'aria-label': 'Username',
  });
  const password = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'current-password',
    required: true,
    'data-testid': 'login-password',
    'aria-label': 'Password',
  });
  const error = h('p', { class: 'error', role: 'alert' }, message);
  const form = h(
    'form',
    { class: 'signin', 'data-testid': 'signin-form' },
    h('h2', {}, 'Sign in to mindledger'),
    h('label', {}, 'Username', username),
    h('label', {}, 'Password', password),
    error,
    h('button', { class: 'primary', type: 'submit' }, 'Sign in'),
  );
  const overlay = h('div', { class: 'overlay' }, form);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    error.textContent = '';
    login(username.value, password.value)
      .then(() => {
        overlay.remove();
        signInShown = false;
        void start();
      })
      .catch((err: Error) => {
        error.textContent = err instanceof SignInRequired ? 'Wrong username or password' : err.message;
      });
  });
  document.body.append(overlay);
  username.focus();
};
let authOn = false;
onSignInRequired(() => {
  if (authOn) showSignIn();
  else toast('The server answered 401: sign in is required', 'error');
});

/** What the signed-in role may do here: the rest is hidden (the server refuses it anyway). */
const applyRole = (me: Me | null) => {
  const can = capabilities(me?.role ?? null);
  document.body.dataset.role = me?.role ?? 'none';
  document.body.dataset.canUpload = String(can.upload);
  tabs.get('chat')!.hidden = !can.chat;
  return can;
};

const showUser = (status: Status, me: Me | null) => {
  const version = status.mindsdb_version ?? status.version;
  fill(
    userBox,
    me?.user
      ? h(
          'span',
          { class: 'who', 'data-testid': 'signed-in', title: `Signed in (${me.via})` },
          h('span', { 'data-testid': 'signed-in-user' }, me.user),
          ' ',
          h('span', { class: 'badge role', 'data-testid': 'signed-in-role' }, me.role ?? ''),
          me.project ? h('span', { class: 'note' }, ` project ${me.project}`) : null,
        )
      : null,
    h('span', { class: 'note', title: 'server version' }, version ? `v${String(version)}` : ''),
    me?.user && me.via === 'session'
      ? h(
          'button',
          {
            class: 'small',
            'data-testid': 'sign-out',
            onclick: () => void logout().finally(() => location.reload()),
          },
          'Sign out',
        )
      : null,
  );
};

/**
 * The status (open to all), then, when sign-in is on, one probe of who the caller is: a 401 asks
 * for sign-in before anything else is read; once signed in, the user and role show in the header
 * and the schema loads.
 */
const start = async () => {
  let status: Status;
  try {
    status = await getJson<Status>('/api/status');
  } catch (e) {
    if (e instanceof SignInRequired) {
      authOn = true;
      showSignIn();
      return;
    }
    toast(`Server unreachable: ${(e as Error).message}`, 'error');
    return;
  }
  authOn = authEnabled(status);
  let me: Me | null = null;
  if (authOn) {
    fill(userBox);
    try {
      me = await getJson<Me>('/api/me');
    } catch (e) {
      if (!(e instanceof SignInRequired))
        toast(`Could not tell who you are: ${(e as Error).message}`, 'error');
      return; // the sign-in form is up (a 401 raised it)
    }
  }
  showUser(status, me);
  const can = applyRole(me);
  if (!can.query) {
    show('audit'); // an auditor reads the log; the schema's tables are not theirs to read
    return;
  }
  await tree.refresh();
};

show('query');
document.body.dataset.ready = 'true';
void start();
