/**
 * MySQL's LIKE on a case-insensitive collation: `%` any run, `_` one character, a backslash makes
 * the next character literal (Connector/J sends `character\_set%`).
 */
export const likeMatcher = (pattern: string): ((value: string) => boolean) => {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
    else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += escapeRegExp(c);
  }
  const re = new RegExp(`^${source}$`, 'is');
  return (value) => re.test(value);
};

const escapeRegExp = (c: string) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
