import os from 'node:os';

/**
 * Server paths never reach a client. Error details can carry them from many places (DuckDB names the
 * file it failed to read, Node names the directory it could not create), and a path tells an
 * attacker how the host is laid out (`/srv/data/files/blobs/<sha256>.parquet`). Every problem detail
 * goes through `stripServerPaths` in the one error mapper, so no route has to remember to.
 *
 * Two rules, both keeping only the last path component (what a client can act on, `x.parquet`):
 * - a path under one of the directories registered here (DATA_DIR, the DuckDB file's directory,
 *   the working, temporary and home directories) becomes `<server path>/name`;
 * - any other absolute path of two components or more becomes `<server path>/name` as well, except
 *   this API's own URL paths (`/api/…`, `/doc`), which details name on purpose ("use POST
 *   /api/projects").
 */
const registered = new Set<string>();
let roots: string[] = [];

const register = (paths: readonly string[]) => {
  for (const p of paths) {
    const trimmed = p.replace(/[/\\]+$/, '');
    // "/" itself is no root worth naming: every absolute path is under it (the generic rule applies).
    if (trimmed.length > 1) registered.add(trimmed);
  }
  roots = [...registered].sort((a, b) => b.length - a.length);
};
register([process.cwd(), os.tmpdir(), os.homedir()]);

/** Adds directories whose paths must never reach a client (several apps in one process add theirs). */
export const registerServerPaths = (paths: readonly string[]) => register(paths);

const PLACEHOLDER = '<server path>';
// Characters that end a path inside a message: quotes, blanks, and the punctuation around them.
const isPathEnd = (c: string) => /["'`\s,;)\]}>]/.test(c);

const replacement = (path: string) => {
  // A path DuckDB cut short ("/srv/data/files/incoming/340e…") keeps its cut last component.
  const last = path.split(/[/\\]/).filter(Boolean).pop();
  return last ? `${PLACEHOLDER}/${last}` : PLACEHOLDER;
};

const stripRoots = (message: string) => {
  let out = message;
  for (const root of roots) {
    let at = out.indexOf(root);
    while (at !== -1) {
      let end = at + root.length;
      // Only a whole component: /srv/data must not match /srv/database.
      const next = out[end];
      if (next === undefined || next === '/' || next === '\\' || isPathEnd(next) || next === ':') {
        while (end < out.length && !isPathEnd(out[end]!)) end++;
        const swapped = replacement(out.slice(at + root.length, end));
        out = out.slice(0, at) + swapped + out.slice(end);
        at = out.indexOf(root, at + swapped.length);
      } else at = out.indexOf(root, end);
    }
  }
  return out;
};

/**
 * Any other absolute path: a `/` at the start of the message or after a blank, quote or bracket,
 * then at least two components. `<server path>/x` itself never matches (it follows `>`, not a
 * delimiter) and neither do MIME types (`application/json` does not start with `/`).
 */
const ABSOLUTE =
  /(^|["'`\s(=[{,:])(\/(?!api(?:\/|\b)|doc(?:\/|\b))[^\s"'`/,;)\]}>]+(?:\/[^\s"'`/,;)\]}>]*)+)/g;
const WINDOWS = /(^|["'`\s(=[{,:])([A-Za-z]:\\[^\s"'`,;)\]}>]+)/g;

export const stripServerPaths = (message: string): string =>
  stripRoots(message)
    .replace(ABSOLUTE, (_m, before: string, path: string) => `${before}${replacement(path)}`)
    .replace(WINDOWS, (_m, before: string, path: string) => `${before}${replacement(path)}`);
