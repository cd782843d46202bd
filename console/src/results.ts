import * as Plot from '@observablehq/plot';
import { cellText, copyText, fill, h, toast } from './dom';
import {
  bandAxisLayout,
  columnKind,
  compareCells,
  formatNumber,
  MAX_LABEL_CHARS,
  parseServerTime,
  timeInterval,
  pickChart,
  toCsv,
  toJson,
  type ChartKind,
  type SqlAnswer,
} from './logic';

/** Rows drawn in the grid at once; sorting and copying use every row. */
const RENDERED_ROWS = 1000;
/** Points a chart draws at most. */
const CHART_ROWS = 5000;

export type ResultView = { show(answer: SqlAnswer, ms: number): void; clear(): void };

export const createResults = (parent: HTMLElement): ResultView => {
  const summary = h('div', { class: 'result-summary', 'data-testid': 'result-summary' });
  const gridTab = h('button', { class: 'tab active', 'data-testid': 'tab-grid' }, 'Grid');
  const chartTab = h('button', { class: 'tab', 'data-testid': 'tab-chart', disabled: true }, 'Chart');
  const copyCsv = h('button', { 'data-testid': 'copy-csv', disabled: true }, 'Copy CSV');
  const copyJson = h('button', { 'data-testid': 'copy-json', disabled: true }, 'Copy JSON');
  const body = h('div', { class: 'result-body' });
  parent.append(
    h(
      'div',
      { class: 'result-bar' },
      gridTab,
      chartTab,
      summary,
      h('span', { class: 'spacer' }),
      copyCsv,
      copyJson,
    ),
    body,
  );

  let answer: SqlAnswer | null = null;
  let rows: unknown[][] = [];
  let sort: { column: number; descending: boolean } | null = null;
  let mode: 'grid' | 'chart' = 'grid';
  let chartKind: ChartKind | null = null;
  let chartX: number | null = null;
  let chartY = 0;

  const columns = () => answer?.column_names ?? [];
  const types = () => answer?.column_types ?? [];

  const renderGrid = () => {
    const cols = columns();
    const headerCells = cols.map((name, i) => {
      const arrow = sort?.column === i ? (sort.descending ? ' ▼' : ' ▲') : '';
      return h(
        'th',
        {
          title: 'Sort',
          'data-column': name,
          onclick: () => {
            sort =
              sort?.column === i
                ? { column: i, descending: !sort.descending }
                : { column: i, descending: false };
            const s = sort;
            rows = [...rows].sort((a, b) => (s.descending ? -1 : 1) * compareCells(a[i], b[i]));
            renderGrid();
          },
        },
        h('span', { class: 'col-name' }, name + arrow),
        types()[i] ? h('span', { class: 'col-type' }, types()[i]) : null,
      );
    });
    const shown = rows.slice(0, RENDERED_ROWS);
    const table = h(
      'table',
      { class: 'grid', 'data-testid': 'result-grid' },
      h('thead', {}, h('tr', {}, h('th', { class: 'rownum' }, '#'), headerCells)),
      h(
        'tbody',
        {},
        shown.map((r, n) =>
          h(
            'tr',
            {},
            h('td', { class: 'rownum' }, n + 1),
            cols.map((_, i) => {
              const v = r[i];
              if (typeof v === 'number') {
                const shown = formatNumber(v);
                // The full value on hover (and in every copy) when the cell rounds it.
                return h('td', { class: 'num', title: shown === String(v) ? null : String(v) }, shown);
              }
              return h('td', { class: v === null || v === undefined ? 'null' : '' }, cellText(v));
            }),
          ),
        ),
      ),
    );
    fill(
      body,
      h('div', { class: 'grid-wrap' }, table),
      rows.length > RENDERED_ROWS
        ? h(
            'p',
            { class: 'note' },
            `Showing ${RENDERED_ROWS} of ${rows.length} rows (copy takes all of them).`,
          )
        : null,
    );
  };

  const renderChart = () => {
    const cols = columns();
    const data = rows.slice(0, CHART_ROWS).map((r) => Object.fromEntries(cols.map((c, i) => [c, r[i]])));
    const kindSelect = h(
      'select',
      {
        'data-testid': 'chart-kind',
        'aria-label': 'Chart kind',
        onchange: (e: Event) => (
          (chartKind = (e.target as HTMLSelectElement).value as ChartKind),
          renderChart()
        ),
      },
      (['bar', 'line', 'scatter'] as const).map((k) =>
        h('option', { value: k, selected: k === chartKind }, k),
      ),
    );
    const axisSelect = (
      label: string,
      current: number | null,
      allowNone: boolean,
      set: (v: number | null) => void,
    ) =>
      h(
        'label',
        {},
        `${label} `,
        h(
          'select',
          {
            'aria-label': label,
            onchange: (e: Event) => {
              const v = (e.target as HTMLSelectElement).value;
              set(v === '' ? null : Number(v));
              renderChart();
            },
          },
          allowNone ? h('option', { value: '', selected: current === null }, '(row)') : null,
          cols.map((c, i) => h('option', { value: i, selected: i === current }, c)),
        ),
      );
    const xName = chartX === null ? '__row' : cols[chartX]!;
    const yName = cols[chartY]!;
    const xKind =
      chartX === null
        ? 'number'
        : columnKind(
            types()[chartX],
            rows.map((r) => r[chartX!]),
          );
    const xTime = xKind === 'time';
    const points = data.map((d, i) => ({
      ...d,
      __row: i + 1,
      [yName]: d[yName] === null || d[yName] === undefined ? null : Number(d[yName]),
      ...(xTime ? { [xName]: parseServerTime(String(d[xName])) } : {}),
    }));
    const width = Math.max(320, Math.min(body.clientWidth || 800, 1400) - 24);
    const xLabel = chartX === null ? 'row' : xName;
    const yAxis = { label: yName, grid: true };
    let plot: Element;
    if (chartKind === 'bar' && !xTime) {
      // Bars keep the result's order (its ORDER BY), not the alphabet; long labels turn and fit.
      const shown = points.slice(0, 200);
      const domain = [...new Set(shown.map((p) => p[xName] as unknown))];
      const text = (v: unknown) => (v === null || v === undefined ? 'NULL' : String(v));
      const layout = bandAxisLayout(domain.map(text), width);
      const cut = (v: unknown) => {
        const t = text(v);
        return t.length > MAX_LABEL_CHARS ? `${t.slice(0, MAX_LABEL_CHARS - 1)}…` : t;
      };
      plot = Plot.plot({
        width,
        height: 300 + layout.marginBottom,
        marginLeft: layout.marginLeft,
        marginBottom: layout.marginBottom,
        x: {
          type: 'band',
          domain,
          label: xLabel,
          labelAnchor: 'center',
          labelArrow: 'none',
          labelOffset: layout.marginBottom - 6,
          tickRotate: layout.rotate,
          tickFormat: cut,
          ticks: domain.filter((_, i) => i % layout.every === 0),
        },
        y: yAxis,
        marks: [Plot.barY(shown, { x: xName, y: yName, tip: true }), Plot.ruleY([0])],
      });
    } else if (chartKind === 'bar') {
      // A time column makes a time axis: one bar per step of the calendar, gaps where rows are missing.
      const interval = timeInterval(points.map((p) => (p[xName] as Date).getTime()));
      plot = Plot.plot({
        width,
        height: 340,
        marginLeft: 60,
        marginBottom: 50,
        x: { type: 'utc', label: xLabel },
        y: yAxis,
        marks: [
          Plot.rectY(points.slice(0, 200), { x: xName, y: yName, interval, tip: true, inset: 1 }),
          Plot.ruleY([0]),
        ],
      });
    } else {
      const marks =
        chartKind === 'line'
          ? [
              Plot.lineY(points, { x: xName, y: yName, sort: xName }),
              Plot.dotY(points, { x: xName, y: yName, r: 2 }),
            ]
          : [Plot.dot(points, { x: xName, y: yName, tip: true })];
      plot = Plot.plot({
        width,
        height: 320,
        marginLeft: 60,
        marginBottom: 50,
        x: { label: xLabel, ...(xTime ? { type: 'utc' as const } : {}) },
        y: yAxis,
        marks,
      });
    }
    fill(
      body,
      h(
        'div',
        { class: 'chart-controls' },
        h('label', {}, 'Chart ', kindSelect),
        axisSelect('x', chartX, true, (v) => (chartX = v)),
        axisSelect('y', chartY, false, (v) => (chartY = v ?? 0)),
        chartKind === 'bar' && points.length > 200 ? h('span', { class: 'note' }, 'first 200 rows') : null,
      ),
      h(
        'div',
        {
          class: 'chart',
          'data-testid': 'chart',
          'data-kind': chartKind ?? '',
          'data-x-axis': xTime ? 'time' : chartKind === 'bar' ? 'band' : 'linear',
        },
        plot,
      ),
    );
  };

  const render = () => {
    gridTab.classList.toggle('active', mode === 'grid');
    chartTab.classList.toggle('active', mode === 'chart');
    if (mode === 'chart' && chartKind) renderChart();
    else renderGrid();
  };
  gridTab.addEventListener('click', () => ((mode = 'grid'), render()));
  chartTab.addEventListener('click', () => ((mode = 'chart'), render()));
  copyCsv.addEventListener(
    'click',
    () => void copyText(toCsv(columns(), rows)).then(() => toast(`Copied ${rows.length} rows as CSV`)),
  );
  copyJson.addEventListener(
    'click',
    () => void copyText(toJson(columns(), rows)).then(() => toast(`Copied ${rows.length} rows as JSON`)),
  );

  return {
    clear: () => {
      answer = null;
      fill(summary);
      fill(body);
    },
    show: (a, ms) => {
      answer = a;
      rows = a.data ?? [];
      sort = null;
      const tableLike = a.type === 'table';
      copyCsv.disabled = copyJson.disabled = !tableLike;
      const plan = tableLike
        ? pickChart(
            columns().map((_, i) => types()[i]),
            rows,
          )
        : null;
      chartTab.disabled = plan === null;
      chartKind = plan?.kind ?? null;
      chartX = plan?.x ?? null;
      chartY = plan?.y ?? 0;
      if (!plan) mode = 'grid';
      if (a.type === 'error') {
        fill(summary, h('span', { class: 'badge error' }, 'error'), ` ${ms} ms`);
        fill(
          body,
          h(
            'div',
            { class: 'sql-error', role: 'alert', 'data-testid': 'sql-error' },
            h('strong', {}, `Error ${a.error_code ?? ''}`),
            h('pre', {}, a.error_message ?? 'The query failed'),
          ),
        );
        return;
      }
      if (a.type === 'ok') {
        fill(summary, h('span', { class: 'badge ok' }, 'OK'), ` ${ms} ms`);
        fill(body, h('p', { class: 'note', 'data-testid': 'sql-ok' }, 'Statement executed.'));
        return;
      }
      fill(
        summary,
        `${rows.length} row${rows.length === 1 ? '' : 's'} · ${ms} ms`,
        a.truncated
          ? h(
              'span',
              {
                class: 'badge warn',
                'data-testid': 'truncated',
                title: 'The answer was cut at the server’s row or byte limit',
              },
              'truncated',
            )
          : null,
      );
      render();
    },
  };
};
