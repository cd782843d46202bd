/** Bytes per unit of a size as settings are written (`2GB`, `1.5GiB`) and as DuckDB prints them (`300.0 MiB`, `0 bytes`). */
const UNITS: Record<string, number> = {
  bytes: 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** A size (a number, then a unit; none: bytes) in bytes; NaN when it is not one. */
export const bytesOfSize = (value: string): number => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i.exec(value);
  const unit = UNITS[(m?.[2] ?? 'b').toLowerCase()];
  return m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
};
