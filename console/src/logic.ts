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

/**
 * A number as the grid shows it: whole numbers as they are, a fraction to six significant digits
 * (at most four decimals past the whole part, so `2299.7504708632114` reads `2299.75`), very large
 * or very small ones in exponent form. The cell's title and every copy keep the full value.
 */
export const formatNumber = (v: number): string => {
  if (!Number.isFinite(v) || Number.isInteger(v)) return String(v);
  const abs = Math.abs(v);
  if (abs >= 1e15 || abs < 1e-4) return v.toExponential(3);
  const whole = abs < 1 ? 0 : Math.floor(Math.log10(abs)) + 1;
  const decimals = Math.min(4, Math.max(2, 6 - whole));
  return String(Number(v.toFixed(decimals)));
};

const pad2 = (n: number) => String(n).padStart(2, '0');

/**
 * A server timestamp as a moment: ISO with a zone as it is, and the log's `YYYY-MM-DD HH:MM:SS.ffffff`
 * (MindsDB's form, always UTC, written without a zone) as UTC.
 */
export const parseServerTime = (value: string): Date => {
  const iso = value.trim().replace(' ', 'T');
  // A date alone is read as UTC midnight already; a time with a zone keeps it.
  if (!iso.includes('T') || /([zZ]|[+-]\d\d:?\d\d)$/.test(iso)) return new Date(iso);
  return new Date(`${iso}Z`);
};

/** The console's one convention for times: local time, `YYYY-MM-DD HH:MM:SS`, labelled by `zoneLabel`. */
export const localTime = (d: Date): string =>
  Number.isNaN(d.getTime())
    ? ''
    : `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ` +
      `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;

/** The browser's offset from UTC at a moment, as `UTC+05:30` (`UTC` when none). */
export const zoneLabel = (d: Date = new Date()): string => {
  const offset = -d.getTimezoneOffset();
  if (offset === 0) return 'UTC';
  const abs = Math.abs(offset);
  return `UTC${offset > 0 ? '+' : '-'}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
};

/** Elapsed time for people: `8 s`, `2 min 05 s`, `1 h 02 min`. */
export const formatElapsed = (ms: number): string => {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad2(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${pad2(Math.floor((s % 3600) / 60))} min`;
};

/** Engines of chat channels (a chatbot's `database`): a messaging service, not tables to query. */
export const CHAT_CHANNEL_ENGINES = ['slack', 'telegram', 'webhook'] as const;
export const isChatChannel = (engine: string) =>
  (CHAT_CHANNEL_ENGINES as readonly string[]).includes(engine.toLowerCase());

/** The calendar step of a time axis's bars: the largest of these no longer than the smallest gap. */
export const timeInterval = (
  times: number[],
): 'year' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'second' => {
  const sorted = [...new Set(times.filter(Number.isFinite))].sort((a, b) => a - b);
  let gap = Infinity;
  for (let i = 1; i < sorted.length; i++) gap = Math.min(gap, sorted[i]! - sorted[i - 1]!);
  const day = 86_400_000;
  if (gap >= 365 * day) return 'year';
  if (gap >= 28 * day) return 'month';
  if (gap >= 7 * day) return 'week';
  if (gap >= day) return 'day';
  if (gap >= 3_600_000) return 'hour';
  if (gap >= 60_000) return 'minute';
  return 'second';
};

/** Width of a tick label, about, in pixels (Plot's 10px sans-serif). */
const LABEL_CHAR_PX = 6.2;
/** Labels longer than this are cut with `…` on the axis (whole in the tip). */
export const MAX_LABEL_CHARS = 28;

export type BandAxisLayout = {
  rotate: number;
  marginBottom: number;
  marginLeft: number;
  /** Every n-th label is drawn when the bars are too narrow for all of them. */
  every: number;
};

/**
 * How a bar chart's category labels fit: level when each fits its bar, else turned 45° with room
 * below for the longest and on the left for the first ones (a turned label reaches back left of its
 * bar), and thinned when the bars are narrower than a line of text. The axis title goes under them.
 */
export const bandAxisLayout = (labels: string[], width: number, minMarginLeft = 60): BandAxisLayout => {
  const px = (s: string) => Math.min(s.length, MAX_LABEL_CHARS) * LABEL_CHAR_PX;
  const n = Math.max(1, labels.length);
  const longest = Math.max(0, ...labels.map(px));
  const band = (width - minMarginLeft - 20) / n;
  if (longest <= band - 6) return { rotate: 0, marginBottom: 44, marginLeft: minMarginLeft, every: 1 };
  const every = Math.max(1, Math.ceil(14 / Math.max(1, band)));
  const sin = Math.SQRT1_2;
  // A label turned -45° ends at its tick and reaches back left by its width × cos 45°.
  let marginLeft = minMarginLeft;
  labels.forEach((label, i) => {
    if (i % every !== 0) return;
    const tick = minMarginLeft + band * (i + 0.5);
    marginLeft = Math.max(marginLeft, minMarginLeft + px(label) * sin - tick + 8);
  });
  return {
    rotate: -45,
    marginBottom: Math.ceil(longest * sin + 10 * sin + 34),
    marginLeft: Math.min(Math.ceil(marginLeft), Math.round(width / 3)),
    every,
  };
};

export type Role = 'admin' | 'editor' | 'analyst' | 'auditor';

/**
 * What the console offers a role (the server's rules, src/users/roles.ts): editors and admins
 * everything; analysts read, query and ask agents, but upload nothing; auditors read the event log
 * (and information_schema.EVENTS). No role (sign-in off): everything.
 */
export const capabilities = (role: Role | null) => ({
  upload: role === null || role === 'admin' || role === 'editor',
  chat: role !== 'auditor',
  query: role !== 'auditor',
});

/** MindsDB's five phases, as the models table numbers them (src/models/projection.ts). */
const PHASES: Record<string, [number, string]> = {
  reading: [2, 'Reading data'],
  encoding: [3, 'Encoding'],
  training: [4, 'Training'],
  calibrating: [5, 'Calibrating'],
};

/** The newest `ModelTrainingProgressed` of a training's stream, as it is in the log. */
export type TrainingReport = { phase: string; percent: number };

export type LiveProgress = ReturnType<typeof trainingProgress> & { elapsed: string | null };

/**
 * A training's progress as the console shows it: the models row, moved on by the newest report in
 * the log when that is further (the log has it first: the row follows when the read model catches
 * up), with the time since the version was defined while it trains.
 */
export const liveProgress = (
  row: Record<string, unknown>,
  report: TrainingReport | null,
  definedAt: number | null,
  now: number,
): LiveProgress => {
  const p = trainingProgress(row);
  const training = p.status === 'training' || p.status === 'generating';
  const merged =
    training && report && report.percent >= (p.percent ?? 0) && PHASES[report.phase]
      ? {
          status: 'training',
          percent: Math.max(0, Math.min(100, Math.round(report.percent))),
          phase: `phase ${PHASES[report.phase]![0]}/5 ${PHASES[report.phase]![1]}`,
        }
      : p;
  return {
    ...merged,
    elapsed: training && definedAt !== null ? formatElapsed(now - definedAt) : null,
  };
};
