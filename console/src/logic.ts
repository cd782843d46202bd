/**
 * The console's pure rules (no DOM): what a statement under the cursor is, how a result is copied,
 * which chart suits it, how an event stream splits. Unit-tested in test/console/logic.spec.ts.
 */

/** The SQL endpoint's answer. */
export type SqlAnswer = {
  type: 'table' | 'ok' | 'error';
  column_names?: string[];
  column_types?: string[];
  data?: unknown[][];
  truncated?: boolean;
  error_code?: number;
  error_message?: string;
};

/** The statements of a script with their offsets, split on `;` outside quotes and comments. */
export const splitStatements = (text: string): { from: number; to: number; sql: string }[] => {
  const out: { from: number; to: number; sql: string }[] = [];
  let start = 0;
  let i = 0;
  const push = (end: number) => {
    const raw = text.slice(start, end);
    if (raw.trim()) {
      const lead = raw.length - raw.trimStart().length;
      out.push({ from: start + lead, to: start + raw.trimEnd().length, sql: raw.trim() });
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '-' && text[i + 1] === '-') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === ';') {
      push(i);
      start = i + 1;
      i++;
    } else i++;
  }
  push(text.length);
  return out;
};

/** The statement to run: the one the cursor is in (or right after), else the last before it. */
export const statementAt = (text: string, pos: number): string | undefined => {
  const all = splitStatements(text);
  if (all.length === 0) return undefined;
  const inside = all.find((s) => pos >= s.from && pos <= s.to + 1);
  if (inside) return inside.sql;
  const before = all.filter((s) => s.to < pos);
  return (before[before.length - 1] ?? all[0]!).sql;
};

const csvCell = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export const toCsv = (columns: string[], rows: unknown[][]) =>
  [columns, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';

export const toJson = (columns: string[], rows: unknown[][]) =>
  JSON.stringify(
    rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i] ?? null]))),
    null,
    2,
  );

const NUMERIC_TYPE =
  /^(TINYINT|SMALLINT|INT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|REAL|DOUBLE|DECIMAL|NUMERIC)/i;
const TEMPORAL_TYPE = /^(DATE|TIMESTAMP|TIME|DATETIME)/i;

const isNumberLike = (v: unknown) =>
  typeof v === 'number' || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)));

export type ColumnKind = 'number' | 'time' | 'text';

/** A column's kind, by its declared type, else by its values (null cells ignored). */
export const columnKind = (type: string | undefined, values: unknown[]): ColumnKind => {
  if (type && NUMERIC_TYPE.test(type)) return 'number';
  if (type && TEMPORAL_TYPE.test(type)) return 'time';
  const present = values.filter((v) => v !== null && v !== undefined);
  if (present.length === 0) return 'text';
  if (present.every((v) => typeof v === 'number')) return 'number';
  if (!type && present.every(isNumberLike)) return 'number';
  return 'text';
};

/** Compares two cells for sorting: nulls last, numbers as numbers, text by locale. */
export const compareCells = (a: unknown, b: unknown): number => {
  const an = a === null || a === undefined;
  const bn = b === null || b === undefined;
  if (an || bn) return an === bn ? 0 : an ? 1 : -1;
  if (isNumberLike(a) && isNumberLike(b)) return Number(a) - Number(b);
  return String(a).localeCompare(String(b));
};

export type ChartKind = 'bar' | 'line' | 'scatter';
export type ChartPlan = { kind: ChartKind; x: number | null; y: number };

/**
 * The chart a result suggests, or null when it has no numeric column: a time column and a number
 * draw a line, a text column and a number bars, two numbers a scatter, one number alone bars by row.
 */
export const pickChart = (types: (string | undefined)[], rows: unknown[][]): ChartPlan | null => {
  const kinds = types.map((t, i) =>
    columnKind(
      t,
      rows.map((r) => r[i]),
    ),
  );
  const numbers = kinds.flatMap((k, i) => (k === 'number' ? [i] : []));
  if (numbers.length === 0) return null;
  const time = kinds.indexOf('time');
  const text = kinds.indexOf('text');
  if (time >= 0) return { kind: 'line', x: time, y: numbers[0]! };
  if (text >= 0) return { kind: 'bar', x: text, y: numbers[0]! };
  if (numbers.length >= 2) return { kind: 'scatter', x: numbers[0]!, y: numbers[1]! };
  return { kind: 'bar', x: null, y: numbers[0]! };
};

/** Splits a text/event-stream buffer into complete `data:` payloads and the unfinished rest. */
export const parseSse = (buffer: string): { events: unknown[]; rest: string } => {
  const events: unknown[] = [];
  const blocks = buffer.replace(/\r\n/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (!data) continue;
    try {
      events.push(JSON.parse(data));
    } catch {
      events.push({ type: 'raw', content: data });
    }
  }
  return { events, rest };
};

/** A SQL identifier, backquoted when it is not a plain name. */
export const ident = (name: string) =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;

/** A SQL string literal. */
export const literal = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** A file's table name from an uploaded file's name: letters, digits and `_`. */
export const fileTableName = (fileName: string) => {
  const base = fileName
    .replace(/\.[^.]+$/, '')
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return (/^[0-9]/.test(base) ? `f_${base}` : base).toLowerCase() || 'upload';
};

/** Training progress from a models row: phase n of m and a percentage, from whichever columns exist. */
export const trainingProgress = (
  row: Record<string, unknown>,
): { status: string; percent: number | null; phase: string | null } => {
  const get = (...names: string[]) => {
    for (const n of names) {
      const key = Object.keys(row).find((k) => k.toLowerCase() === n);
      if (key !== undefined && row[key] !== null && row[key] !== undefined) return row[key];
    }
    return undefined;
  };
  const status = String(get('status') ?? 'unknown');
  const explicit = get('progress', 'training_progress', 'percent', 'progress_percent');
  const current = Number(get('current_training_phase'));
  const total = Number(get('total_training_phases'));
  const phaseName = get('training_phase_name');
  let percent: number | null = null;
  if (explicit !== undefined && Number.isFinite(Number(explicit))) {
    percent = Number(explicit); // the models table reports 0–100 of the whole training
  } else if (Number.isFinite(current) && Number.isFinite(total) && total > 0)
    percent = (Math.min(current, total) / total) * 100;
  if (status === 'complete') percent = 100;
  const phase =
    Number.isFinite(current) && Number.isFinite(total) && total > 0
      ? `phase ${current}/${total}${phaseName ? ` ${String(phaseName)}` : ''}`
      : phaseName
        ? String(phaseName)
        : null;
  return {
    status,
    percent: percent === null ? null : Math.max(0, Math.min(100, Math.round(percent))),
    phase,
  };
};
