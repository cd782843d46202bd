import { getJson, HttpProblem } from './api';
import { fill, h } from './dom';
import { localTime, parseServerTime, zoneLabel } from './logic';

type EventView = {
  position: number;
  stream: string;
  type: string;
  data: unknown;
  recorded_at: string;
  actor?: unknown;
  metadata?: { actor?: unknown };
};

const PAGE = 500;

/** Who did it, wherever the log records it (the actor arrives with sign-in). */
const actorOf = (e: EventView): string => {
  const data = e.data as { actor?: unknown } | null;
  const a = e.actor ?? e.metadata?.actor ?? data?.actor;
  if (a === null || a === undefined) return '';
  return typeof a === 'object' ? JSON.stringify(a) : String(a);
};

/** The event log with filters: stream (server side), type, actor and time (on the page read). */
export const createAudit = (parent: HTMLElement) => {
  const stream = h('input', {
    type: 'text',
    placeholder: 'stream (exact)',
    'data-testid': 'audit-stream',
    'aria-label': 'Stream',
  });
  const type = h('input', {
    type: 'text',
    placeholder: 'type contains',
    'data-testid': 'audit-type',
    'aria-label': 'Event type',
  });
  const actor = h('input', { type: 'text', placeholder: 'actor contains', 'aria-label': 'Actor' });
  const from = h('input', { type: 'datetime-local', 'aria-label': 'From' });
  const to = h('input', { type: 'datetime-local', 'aria-label': 'To' });
  const load = h('button', { class: 'primary', 'data-testid': 'audit-load' }, 'Load latest');
  const more = h('button', { hidden: true }, 'Older…');
  const status = h('div', { class: 'note', 'data-testid': 'audit-status' });
  const verify = h('div', { class: 'note', 'data-testid': 'audit-verification' });
  const verifyButton = h(
    'button',
    {
      'data-testid': 'audit-verify',
      title: 'Recompute the hash tree from the log and check the signed checkpoints',
    },
    'Verify ledger',
  );
  const table = h('div', { class: 'grid-wrap' });
  parent.append(
    h(
      'div',
      { class: 'audit-filters' },
      stream,
      type,
      actor,
      h('label', {}, 'from ', from),
      h('label', {}, 'to ', to),
      load,
    ),
    h('div', { class: 'audit-filters' }, verifyButton, verify),
    status,
    table,
    more,
  );

  let events: EventView[] = [];
  let oldest = 0;

  const render = () => {
    const t = type.value.trim().toLowerCase();
    const who = actor.value.trim().toLowerCase();
    const after = from.value ? new Date(from.value).getTime() : -Infinity;
    const before = to.value ? new Date(to.value).getTime() : Infinity;
    const shown = events.filter((e) => {
      const at = parseServerTime(e.recorded_at).getTime();
      return (
        (!t || e.type.toLowerCase().includes(t)) &&
        (!who || actorOf(e).toLowerCase().includes(who)) &&
        (Number.isNaN(at) || (at >= after && at <= before))
      );
    });
    status.textContent = `${shown.length} of ${events.length} events read`;
    fill(
      table,
      h(
        'table',
        { class: 'grid audit', 'data-testid': 'audit-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            [
              ['position', 'position'],
              ['recorded', `recorded (local time, ${zoneLabel()})`],
              ['stream', 'stream'],
              ['type', 'type'],
              ['actor', 'actor'],
              ['data', 'data (click to expand)'],
            ].map(([key, label]) => h('th', { class: `col-${key}`, 'data-column': key }, label)),
          ),
        ),
        h(
          'tbody',
          {},
          [...shown].reverse().map((e) =>
            h(
              'tr',
              {},
              h('td', { class: 'num' }, e.position),
              h(
                'td',
                { 'data-testid': 'audit-recorded', title: `${e.recorded_at} UTC` },
                localTime(parseServerTime(e.recorded_at)),
              ),
              h(
                'td',
                {},
                h(
                  'button',
                  { class: 'link', onclick: () => ((stream.value = e.stream), void reload()) },
                  e.stream,
                ),
              ),
              h('td', {}, e.type),
              h('td', {}, actorOf(e)),
              h(
                'td',
                { class: 'json', 'data-testid': 'audit-data' },
                // Two lines of the data, wrapped in the column; a click shows all of it.
                h(
                  'details',
                  {},
                  h('summary', {}, JSON.stringify(e.data)),
                  h('pre', {}, JSON.stringify(e.data, null, 2)),
                ),
              ),
            ),
          ),
        ),
      ),
    );
  };

  const page = async (after: number) => {
    const q = new URLSearchParams({ after: String(Math.max(0, after)), limit: String(PAGE) });
    if (stream.value.trim()) q.set('stream', stream.value.trim());
    return (await getJson<{ events: EventView[] }>(`/api/events?${q}`)).events;
  };

  /** The newest page: from the read model's position back one page (a stream filter reads from the start). */
  const reload = async () => {
    try {
      const s = await getJson<{
        read_model?: { position?: string | number };
      }>('/api/status');
      const head = Number(s.read_model?.position ?? 0);
      const start = stream.value.trim() ? 0 : Math.max(0, head - PAGE);
      events = await page(start);
      if (stream.value.trim())
        while (events.length > 0 && events.length % PAGE === 0) {
          const next = await page(events[events.length - 1]!.position);
          if (next.length === 0) break;
          events = [...events, ...next].slice(-PAGE * 4);
        }
      oldest = events[0]?.position ?? 0;
      more.hidden = stream.value.trim() !== '' || oldest <= 1;
      render();
    } catch (e) {
      status.textContent = `Could not read the log: ${(e as Error).message}`;
    }
  };
  more.addEventListener('click', () => {
    void page(Math.max(0, oldest - PAGE - 1)).then((older) => {
      events = [...older.filter((e) => e.position < oldest), ...events];
      oldest = events[0]?.position ?? 0;
      more.hidden = oldest <= 1;
      render();
    });
  });
  load.addEventListener('click', () => void reload());
  verifyButton.addEventListener('click', () => {
    verify.textContent = 'Verifying…';
    verifyButton.disabled = true;
    getJson<{
      ok: boolean;
      events?: number;
      checkpointsVerified?: number;
      uncheckpointed?: number;
      problem?: string;
      detail?: string;
      position?: unknown;
    }>('/api/audit/verify')
      .then((v) => {
        verify.className = v.ok ? 'note ok' : 'error';
        verify.textContent = v.ok
          ? `Ledger verified: ${v.events ?? '?'} events, ${v.checkpointsVerified ?? 0} signed checkpoints checked, ${v.uncheckpointed ?? 0} events after the last checkpoint`
          : `Ledger verification FAILED: ${v.problem ?? ''} ${v.detail ?? ''}${v.position === undefined ? '' : ` (event ${String(v.position)})`}`;
      })
      .catch((e: Error) => {
        verify.className = 'note';
        verify.textContent =
          e instanceof HttpProblem && e.status === 404
            ? 'This server has no ledger verification yet'
            : `Could not verify: ${e.message}`;
      })
      .finally(() => (verifyButton.disabled = false));
  });
  for (const el of [type, actor, from, to]) el.addEventListener('input', render);
  stream.addEventListener('change', () => void reload());
  return { reload };
};
