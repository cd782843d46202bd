import type { JobEvery } from '../../events';
import { invalid } from '../shared/errors';
import { ownEntry } from '../shared/ownEntry';

/**
 * When a job runs, as pure arithmetic: its ticks are `start + k × every` (k = 0, 1, …), up to its
 * end. A job without `every` has one tick, its start. Due at `now` is the latest tick not after
 * `now` that was not claimed yet: ticks missed while no process ran collapse into one run.
 */
export type JobSchedule = {
  readonly startAt: number;
  readonly endAt: number | null;
  readonly every: JobEvery | null;
};

const UNITS: Record<string, JobEvery['unit']> = {
  minute: 'minute',
  minutes: 'minute',
  min: 'minute',
  mins: 'minute',
  hour: 'hour',
  hours: 'hour',
  day: 'day',
  days: 'day',
  week: 'week',
  weeks: 'week',
  month: 'month',
  months: 'month',
};

const FIXED_MS: Record<Exclude<JobEvery['unit'], 'month'>, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
};

/** `EVERY [n] unit` (MindsDB's periods: minute(s)/min, hour(s), day(s), week(s), month(s)). */
export const parseEvery = (n: number | null, unit: string): JobEvery => {
  const u = ownEntry(UNITS, unit.toLowerCase());
  if (!u)
    throw invalid(
      `Unknown period: ${unit} (EVERY takes minute, hour, day, week or month)`,
      'Invalid schedule',
    );
  const count = n ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > 1_000_000)
    throw invalid(`EVERY needs a whole number of ${u}s from 1, got ${n}`, 'Invalid schedule');
  return { n: count, unit: u };
};

/** MindsDB's `schedule_str`: `every 2 hours`, `every 1 minute`. */
export const scheduleStr = (every: JobEvery | null) =>
  every === null ? null : `every ${every.n} ${every.unit}${every.n === 1 ? '' : 's'}`;

/** `every 2 hours` / `2 hours` / `hour` (REST's schedule_str), as written. */
export const parseScheduleStr = (text: string): { n: number | null; unit: string } => {
  const m = /^\s*(?:every\s+)?(?:(\d+)\s+)?([a-z]+)\s*$/i.exec(text);
  if (!m) throw invalid(`Can't parse schedule: ${text} (e.g. "every 2 hours")`, 'Invalid schedule');
  return { n: m[1] === undefined ? null : Number(m[1]), unit: m[2]! };
};

/**
 * `'2025-01-01 00:00:00'`, `'2025-01-01'` (UTC, as MindsDB's formats) or an ISO timestamp;
 * `now` is now.
 */
export const parseJobDate = (text: string, now: Date, what: string): Date => {
  const t = text.trim();
  if (/^now$/i.test(t)) return now;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?$/.exec(t);
  const date = m
    ? new Date(
        Date.UTC(
          Number(m[1]),
          Number(m[2]) - 1,
          Number(m[3]),
          Number(m[4] ?? 0),
          Number(m[5] ?? 0),
          Number(m[6] ?? 0),
        ),
      )
    : /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/.test(t)
      ? new Date(t)
      : new Date(NaN);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() > 9999)
    throw invalid(
      `Can't parse date: ${text} (${what} takes 'YYYY-MM-DD HH:MM:SS' or 'YYYY-MM-DD')`,
      'Invalid date',
    );
  return date;
};

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

/** Tick k of a schedule (k ≥ 0). Months keep the start's day, clamped to the month's last day. */
export const tickAt = (s: JobSchedule, k: number): number => {
  if (s.every === null || k === 0) return s.startAt;
  if (s.every.unit !== 'month') return s.startAt + k * s.every.n * FIXED_MS[s.every.unit];
  const start = new Date(s.startAt);
  const months = start.getUTCMonth() + k * s.every.n;
  const year = start.getUTCFullYear() + Math.floor(months / 12);
  const month = ((months % 12) + 12) % 12;
  const day = Math.min(start.getUTCDate(), daysInMonth(year, month));
  return Date.UTC(
    year,
    month,
    day,
    start.getUTCHours(),
    start.getUTCMinutes(),
    start.getUTCSeconds(),
    start.getUTCMilliseconds(),
  );
};

/** The largest k whose tick is not after `at` (−1 when even the start is after it). */
const lastIndexAtOrBefore = (s: JobSchedule, at: number): number => {
  if (at < s.startAt) return -1;
  if (s.every === null) return 0;
  if (s.every.unit !== 'month') return Math.floor((at - s.startAt) / (s.every.n * FIXED_MS[s.every.unit]));
  const a = new Date(at);
  const b = new Date(s.startAt);
  const months = (a.getUTCFullYear() - b.getUTCFullYear()) * 12 + a.getUTCMonth() - b.getUTCMonth();
  let k = Math.max(0, Math.floor(months / s.every.n) + 1);
  while (k > 0 && tickAt(s, k) > at) k--;
  return k;
};

/** The tick due at `now`: the latest one not after now (nor after the end) and after `lastTick`. */
export const dueTick = (s: JobSchedule, lastTick: number | null, now: number): number | null => {
  const until = s.endAt === null ? now : Math.min(now, s.endAt);
  const k = lastIndexAtOrBefore(s, until);
  if (k < 0) return null;
  const tick = tickAt(s, k);
  return lastTick !== null && tick <= lastTick ? null : tick;
};

/** The first tick after `lastTick` (the start when none ran); null when the job has no more. */
export const nextTick = (s: JobSchedule, lastTick: number | null): number | null => {
  if (lastTick === null) return s.endAt !== null && s.startAt > s.endAt ? null : s.startAt;
  if (s.every === null) return null;
  const next = tickAt(s, lastIndexAtOrBefore(s, lastTick) + 1);
  return s.endAt !== null && next > s.endAt ? null : next;
};
