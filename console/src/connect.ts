import { getJson, HttpProblem, sendJson, SignInRequired } from './api';
import { copyText, fill, h, toast } from './dom';
import {
  MCP_CLIENTS,
  mcpClientConfig,
  mcpSwitchesQuery,
  mcpUrl,
  TOKEN_PLACEHOLDER,
  type McpClientKind,
  type McpConnection,
} from './mcpConnect';

/** `GET /mcp/status` with a connection's switches: the tools it is offered, and the groups. */
type McpStatus = { tool_names: string[]; tool_groups: Record<string, string[]> };

/**
 * "Connect an AI client": choose the client, the transport, the project, read-only and the tool
 * groups; the panel makes a token (scoped to the project when one is chosen, so the narrowing
 * holds even if the URL is edited), shows once, and writes the client's configuration with the URL's
 * switches. The tools listed are the server's answer for those switches, never a copy of its rules.
 */
export const createConnect = (parent: HTMLElement) => {
  let projects: string[] = [];
  let signInOn = false;
  let token: string | null = null;

  const client = h(
    'select',
    { 'data-testid': 'connect-client', 'aria-label': 'Client' },
    Object.entries(MCP_CLIENTS).map(([kind, c]) => h('option', { value: kind }, c.label)),
  );
  const transport = h(
    'select',
    { 'data-testid': 'connect-transport', 'aria-label': 'Transport' },
    h('option', { value: 'streamable' }, 'Streamable HTTP (/mcp/)'),
    h('option', { value: 'sse' }, 'HTTP+SSE (/mcp/sse, as MindsDB’s guide)'),
  );
  const project = h('select', { 'data-testid': 'connect-project', 'aria-label': 'Project' });
  const readOnly = h('input', { type: 'checkbox', checked: true, 'data-testid': 'connect-read-only' });
  const groups = h('div', { class: 'connect-groups', 'data-testid': 'connect-groups' });
  const tools = h('p', { class: 'note', 'data-testid': 'connect-tools' });
  const makeToken = h('button', { class: 'primary', 'data-testid': 'connect-make-token' }, 'Create token');
  const tokenNote = h('p', { class: 'note', 'data-testid': 'connect-token-note' });
  const where = h('p', { class: 'note' });
  const config = h('pre', { class: 'connect-config', 'data-testid': 'connect-config' });
  const copy = h('button', { 'data-testid': 'connect-copy' }, 'Copy');
  parent.append(
    h('h2', {}, 'Connect an AI client'),
    h(
      'p',
      { class: 'note' },
      'An MCP client (Cursor, VS Code, Claude Code) reads this service through its tools. ',
      'The switches below can only narrow what the token allows.',
    ),
    h(
      'div',
      { class: 'connect-form' },
      h('label', {}, 'Client ', client),
      h('label', {}, 'Transport ', transport),
      h('label', {}, 'Project ', project),
      h('label', {}, readOnly, ' read-only (changes nothing; SQL as an analyst)'),
      h('fieldset', {}, h('legend', {}, 'Tool groups'), groups),
    ),
    tools,
    h('div', { class: 'toolbar' }, makeToken, tokenNote),
    where,
    config,
    copy,
  );

  const chosenFeatures = () => {
    const boxes = [...groups.querySelectorAll<HTMLInputElement>('input[type=checkbox]')];
    const on = boxes.filter((b) => b.checked).map((b) => b.value);
    return on.length === boxes.length ? null : on;
  };
  const connection = (): McpConnection => ({
    origin: location.origin,
    transport: transport.value === 'sse' ? 'sse' : 'streamable',
    readOnly: readOnly.checked,
    project: project.value === '' ? null : project.value,
    features: chosenFeatures(),
    token: signInOn ? (token ?? TOKEN_PLACEHOLDER) : null,
    name: project.value === '' ? 'mindledger' : `mindledger-${project.value}`,
  });

  let asked = 0;
  const render = async () => {
    const c = connection();
    const kind = client.value as McpClientKind;
    config.textContent = mcpClientConfig(kind, c);
    where.textContent = `${MCP_CLIENTS[kind].label}: ${MCP_CLIENTS[kind].file}. URL: ${mcpUrl(c)}`;
    makeToken.hidden = !signInOn;
    if (c.features !== null && c.features.length === 0) {
      tools.textContent = 'Choose at least one tool group.';
      return;
    }
    const mine = ++asked;
    try {
      const query = mcpSwitchesQuery(c);
      const status = await getJson<McpStatus>(`/mcp/status${query ? `?${query}` : ''}`);
      if (mine === asked) tools.textContent = `Tools offered: ${status.tool_names.join(', ')}`;
    } catch (e) {
      if (mine === asked && !(e instanceof SignInRequired)) tools.textContent = (e as Error).message;
    }
  };

  for (const control of [client, transport, readOnly])
    control.addEventListener('change', () => void render());
  // A token scoped to one project is refused on another's URL: a new choice needs a new token.
  project.addEventListener('change', () => {
    token = null;
    tokenNote.textContent = '';
    void render();
  });
  groups.addEventListener('change', () => void render());
  copy.addEventListener('click', () => void copyText(config.textContent ?? '').then(() => toast('Copied')));
  makeToken.addEventListener('click', () => {
    const c = connection();
    makeToken.disabled = true;
    sendJson<{ token: string }>('POST', '/api/tokens', {
      name: `${c.name} (${MCP_CLIENTS[client.value as McpClientKind].label})`,
      ...(c.project === null ? {} : { project: c.project }),
    })
      .then((made) => {
        token = made.token;
        tokenNote.textContent = `A token${c.project === null ? '' : ` scoped to ${c.project}`} was made: it is shown only now, in the configuration below. Revoke it with DELETE /api/tokens/{id}.`;
        void render();
      })
      .catch((e: Error) => {
        if (!(e instanceof SignInRequired)) toast(e instanceof HttpProblem ? e.message : String(e), 'error');
      })
      .finally(() => (makeToken.disabled = false));
  });

  return {
    /** Called when the view is shown: the projects and the groups as the server has them now. */
    load: async (options: { signInOn: boolean; projects: string[] }) => {
      signInOn = options.signInOn;
      if (options.projects.join('\n') !== projects.join('\n')) {
        projects = options.projects;
        const chosen = project.value;
        fill(
          project,
          h('option', { value: '' }, 'every project'),
          projects.map((p) => h('option', { value: p, selected: p === chosen }, p)),
        );
      }
      if (groups.childElementCount === 0) {
        const status = await getJson<McpStatus>('/mcp/status');
        fill(
          groups,
          Object.entries(status.tool_groups).map(([group, names]) =>
            h(
              'label',
              { title: names.join(', ') },
              h('input', {
                type: 'checkbox',
                value: group,
                checked: true,
                'data-testid': `connect-group-${group}`,
              }),
              ` ${group}`,
            ),
          ),
        );
      }
      await render();
    },
  };
};
