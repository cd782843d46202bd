import { fill, h } from './dom';
import { localTime, zoneLabel } from './logic';

export type HistoryEntry = { sql: string; at: string; ok: boolean; ms: number; rows: number | null };
const KEY = 'mindledger.console.history';
const MAX = 200;

/** Queries run in this browser, newest first, kept in localStorage. */
export const readHistory = (): HistoryEntry[] => {
  try {
    const parsed = JSON.parse(localStorage.getItem(KEY) ?? '[]') as unknown;
    return Array.isArray(parsed) ? (parsed as HistoryEntry[]) : [];
  } catch {
    return [];
  }
};

export const remember = (entry: HistoryEntry) => {
  const rest = readHistory().filter((e) => e.sql !== entry.sql);
  localStorage.setItem(KEY, JSON.stringify([entry, ...rest].slice(0, MAX)));
};

export const createHistory = (parent: HTMLElement, load: (sql: string) => void) => {
  const filter = h('input', { type: 'search', placeholder: 'filter', 'aria-label': 'Filter history' });
  const clear = h('button', {}, 'Clear history');
  const list = h('ol', { class: 'history', 'data-testid': 'history' });
  parent.append(h('div', { class: 'audit-filters' }, filter, clear), list);
  const render = () => {
    const f = filter.value.toLowerCase();
    const entries = readHistory().filter((e) => !f || e.sql.toLowerCase().includes(f));
    fill(
      list,
      entries.length
        ? h('p', { class: 'note', 'data-testid': 'history-zone' }, `Times are local (${zoneLabel()}).`)
        : h('p', { class: 'note' }, 'Queries you run are kept here, in this browser.'),
      entries.map((e) =>
        h(
          'li',
          {},
          h('button', { class: 'leaf', onclick: () => load(e.sql) }, h('pre', {}, e.sql)),
          h(
            'span',
            { class: `note ${e.ok ? '' : 'error'}` },
            h(
              'time',
              { datetime: e.at, title: `${e.at} (UTC)`, 'data-testid': 'history-time' },
              localTime(new Date(e.at)),
            ),
            ` · ${e.ok ? (e.rows === null ? 'ok' : `${e.rows} rows`) : 'error'} · ${e.ms} ms`,
          ),
        ),
      ),
    );
  };
  filter.addEventListener('input', render);
  clear.addEventListener('click', () => {
    localStorage.removeItem(KEY);
    render();
  });
  return { render };
};
