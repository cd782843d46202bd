import { request } from './api';
import { fill, h } from './dom';
import { parseSse } from './logic';

type Chunk = {
  type?: string;
  content?: unknown;
  output?: string;
  actions?: { tool: string; tool_input: unknown }[];
  steps?: { action: { tool: string; tool_input: unknown }; observation: string }[];
  trace_id?: string;
  error_type?: string;
};

export type ChatPanel = {
  select(project: string, agent: string): void;
  setAgents(agents: { project: string; name: string }[]): void;
};

/** Chat with an agent: the answer streams from completions/stream, each tool call and SQL shown as it happens. */
export const createChat = (parent: HTMLElement, openInEditor: (sql: string) => void): ChatPanel => {
  const agentSelect = h('select', { 'data-testid': 'chat-agent', 'aria-label': 'Agent' });
  const log = h('div', { class: 'chat-log', 'data-testid': 'chat-log', 'aria-live': 'polite' });
  const input = h('textarea', {
    rows: 2,
    placeholder: 'Ask the agent… (Enter sends, Shift+Enter for a new line)',
    'data-testid': 'chat-input',
    'aria-label': 'Message',
  });
  const send = h('button', { class: 'primary', 'data-testid': 'chat-send' }, 'Send');
  const stop = h('button', { hidden: true }, 'Stop');
  const clear = h('button', { title: 'Start a new conversation' }, 'New chat');
  parent.append(
    h('div', { class: 'chat-bar' }, h('label', {}, 'Agent ', agentSelect), clear),
    log,
    h('div', { class: 'chat-input' }, input, send, stop),
  );

  let history: { role: 'user' | 'assistant'; content: string }[] = [];
  let controller: AbortController | null = null;
  const current = () => {
    const [project, ...rest] = agentSelect.value.split('.');
    return project && rest.length ? { project, agent: rest.join('.') } : null;
  };

  const ask = async () => {
    const target = current();
    const question = input.value.trim();
    if (!target || !question || controller) return;
    input.value = '';
    log.append(h('div', { class: 'msg user' }, question));
    const steps = h('ol', { class: 'steps', 'data-testid': 'chat-steps' });
    const answer = h('div', { class: 'answer', 'data-testid': 'chat-answer' });
    const meta = h('div', { class: 'note' });
    const bubble = h(
      'div',
      { class: 'msg assistant streaming', 'data-testid': 'chat-message' },
      steps,
      answer,
      meta,
    );
    log.append(bubble);
    log.scrollTop = log.scrollHeight;
    controller = new AbortController();
    send.disabled = true;
    stop.hidden = false;
    let text = '';
    const step = (...children: (Node | string)[]) => {
      steps.append(h('li', {}, ...children));
      log.scrollTop = log.scrollHeight;
    };
    // The agent's SQL arrives twice: as the tool call's input and as the `sql` chunk of the
    // statement it ran. Shown once: the run marks the tool call's block.
    const shownSql = new Map<string, HTMLElement>();
    const sqlKey = (sql: string) => sql.trim().replace(/;\s*$/, '').replace(/\s+/g, ' ');
    const sqlBlock = (sql: string) => {
      const block = h(
        'div',
        { class: 'sql-step' },
        h('pre', { 'data-testid': 'chat-sql' }, sql),
        h('button', { class: 'small', onclick: () => openInEditor(sql) }, 'Open in editor'),
      );
      shownSql.set(sqlKey(sql), block);
      return block;
    };
    try {
      const res = await request(
        `/api/projects/${encodeURIComponent(target.project)}/agents/${encodeURIComponent(target.agent)}/completions/stream`,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
          body: JSON.stringify({ messages: [...history, { role: 'user', content: question }] }),
          signal: controller.signal,
        },
      );
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const parsed = parseSse(buffer);
        buffer = parsed.rest;
        for (const raw of parsed.events) {
          const c = raw as Chunk;
          if (c.actions)
            for (const a of c.actions) {
              const query = (a.tool_input as { query?: unknown } | null)?.query;
              step(
                h('span', { class: 'tool' }, `tool ${a.tool}`),
                typeof query === 'string'
                  ? sqlBlock(query)
                  : h('code', {}, JSON.stringify(a.tool_input ?? {})),
              );
            }
          else if (c.steps)
            for (const s of c.steps)
              step(h('span', { class: 'observation' }, `↳ ${s.action.tool}: ${s.observation}`));
          else if (typeof c.output === 'string') {
            text += c.output;
            answer.textContent = text;
          } else if (c.type === 'sql' && typeof c.content === 'string') {
            const shown = shownSql.get(sqlKey(c.content));
            if (shown) shown.classList.add('ran');
            else step(h('span', { class: 'tool' }, 'SQL run'), sqlBlock(c.content));
          } else if (c.type === 'error') {
            bubble.classList.add('failed');
            step(
              h(
                'strong',
                { class: 'error' },
                `Error (${c.error_type ?? 'general'}): ${String(c.content ?? '')}`,
              ),
            );
          } else if (c.type === 'end') meta.textContent = `trace ${c.trace_id ?? ''}`;
        }
      }
      if (text)
        history = [...history, { role: 'user', content: question }, { role: 'assistant', content: text }];
    } catch (e) {
      if ((e as Error).name !== 'AbortError') {
        bubble.classList.add('failed');
        step(h('strong', { class: 'error' }, (e as Error).message));
      } else step('stopped');
    } finally {
      bubble.classList.remove('streaming');
      controller = null;
      send.disabled = false;
      stop.hidden = true;
    }
  };

  send.addEventListener('click', () => void ask());
  stop.addEventListener('click', () => controller?.abort());
  clear.addEventListener('click', () => {
    history = [];
    fill(log);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      void ask();
    }
  });
  agentSelect.addEventListener('change', () => {
    history = [];
    fill(log);
  });

  return {
    setAgents: (agents) => {
      const selected = agentSelect.value;
      fill(
        agentSelect,
        agents.length ? null : h('option', { value: '' }, 'no agents yet (CREATE AGENT …)'),
        agents.map((a) => h('option', { value: `${a.project}.${a.name}` }, `${a.project}.${a.name}`)),
      );
      if (selected && agents.some((a) => `${a.project}.${a.name}` === selected)) agentSelect.value = selected;
    },
    select: (project, agent) => {
      const value = `${project}.${agent}`;
      if (![...agentSelect.options].some((o) => o.value === value))
        agentSelect.append(h('option', { value }, value));
      if (agentSelect.value !== value) {
        agentSelect.value = value;
        history = [];
        fill(log);
      }
      input.focus();
    },
  };
};
