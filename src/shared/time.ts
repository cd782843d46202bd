/** A clock is injected everywhere so deciders stay pure and tests can pin time. */
export type Clock = () => Date;
export const systemClock: Clock = () => new Date();

/** A Date as `YYYY-MM-DD HH:MM:SS.mmm` (UTC, no zone): the timestamp text DuckDB and the external engines read. */
export const timestampText = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * MindsDB's wire format for datetimes: `YYYY-MM-DD HH:MM:SS.ffffff` in UTC, no zone suffix.
 * JavaScript clocks have millisecond precision, so the last three digits are zeros.
 */
export const toMindsDbTimestamp = (value: Date | string): string => {
  const d = typeof value === 'string' ? new Date(value) : value;
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}000`
  );
};
