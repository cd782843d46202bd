/**
 * A cell of a row a SELECT answered, by column name as SQL reads names (case-insensitive): the
 * test tables of evaluations and the rows inserted into a knowledge base name their columns as
 * their authors wrote them.
 */
export const cellOf = (row: Readonly<Record<string, unknown>>, column: string): unknown => {
  const wanted = column.toLowerCase();
  const key = Object.keys(row).find((k) => k.toLowerCase() === wanted);
  return key === undefined ? undefined : row[key];
};

/**
 * A cell as text: NULL is empty, a string as it is, a list or a struct as JSON (big integers in it
 * as digits), a number, a big integer or a boolean as SQL prints it.
 */
export const cellText = (v: unknown): string =>
  v === null || v === undefined
    ? ''
    : typeof v === 'string'
      ? v
      : typeof v === 'object'
        ? JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))
        : String(v);
