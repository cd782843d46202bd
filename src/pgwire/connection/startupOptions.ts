/**
 * What a client's startup packet asks beyond its user and database.
 */

/** libpq's `options` startup parameter: `-c name=value` and `--name=value`, space-separated. */
export const optionsOf = (options: string | undefined): Record<string, string> => {
  const out: Record<string, string> = {};
  if (!options) return out;
  const words = options.split(/(?<!\\)\s+/).filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const setting =
      word === '-c'
        ? words[++i]
        : word.startsWith('--')
          ? word.slice(2)
          : word.startsWith('-c')
            ? word.slice(2)
            : undefined;
    const eq = setting?.indexOf('=') ?? -1;
    if (setting && eq > 0)
      out[setting.slice(0, eq).replace(/-/g, '_')] = setting.slice(eq + 1).replace(/\\(.)/g, '$1');
  }
  return out;
};
