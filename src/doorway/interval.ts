/**
 * DuckDB's INTERVAL as the engine answers it ({months, days, micros}) in the text both wire doors
 * send: `1 year 2 months 3 days 04:05:06.7`. The doors differ only in the month's name (MySQL's
 * text is DuckDB's own, `month`; PostgreSQL's IntervalStyle postgres says `mon`).
 */
export const intervalText = (cell: unknown, month: 'month' | 'mon') => {
  if (typeof cell !== 'object' || cell === null) return String(cell);
  const {
    months = 0,
    days = 0,
    micros = 0,
  } = cell as { months?: number; days?: number; micros?: number | string };
  const parts: string[] = [];
  const plural = (n: number, unit: string) => `${n} ${unit}${Math.abs(n) === 1 ? '' : 's'}`;
  const years = Math.trunc(Number(months) / 12);
  const rest = Number(months) % 12;
  if (years) parts.push(plural(years, 'year'));
  if (rest) parts.push(plural(rest, month));
  if (Number(days)) parts.push(plural(Number(days), 'day'));
  const us = BigInt(micros);
  if (us !== 0n || parts.length === 0) {
    const negative = us < 0n;
    const abs = negative ? -us : us;
    const seconds = abs / 1_000_000n;
    const fraction = abs % 1_000_000n;
    const two = (n: bigint) => String(n).padStart(2, '0');
    const frac = fraction ? `.${String(fraction).padStart(6, '0').replace(/0+$/, '')}` : '';
    parts.push(
      `${negative ? '-' : ''}${two(seconds / 3600n)}:${two((seconds / 60n) % 60n)}:${two(seconds % 60n)}${frac}`,
    );
  }
  return parts.join(' ');
};
