/**
 * Which values are secrets, and how readers see them. The log keeps every secret as sent (a
 * connection needs the real password); the projections, the audit endpoint and every answer hold
 * `maskSecrets` of it. The rule is by key name, normalised, so `password`, `DB_PASSWORD`,
 * `dbPassword`, `aws_secret_access_key`, `awsSecretAccessKey`, `api-key`, `X-Api-Key` and
 * `Authorization` are all secrets, and by value shape: a URL's userinfo password
 * (`postgres://u:pw@h/db`) and its secret query parameters are masked wherever the URL appears.
 *
 * Changing these rules changes what projections hold: SECRET_RULES_VERSION is part of the read
 * model's fingerprint, so bumping it rebuilds the tables with the new rules at the next start.
 */
export const SECRET_RULES_VERSION = 2;

/** What every reader shows instead of a secret. A write that sends it back keeps the stored value. */
export const MASK = '******';

/**
 * Words of a key: `awsSecretAccessKey`, `AWS_SECRET_ACCESS_KEY`, `aws-secret-access-key` and
 * `APIKey` → `aws secret access key` / `api key`. Lower case, split at anything that is not a
 * letter or digit and at camelCase humps (an acronym ends before the hump that follows it).
 */
export const keyWords = (key: string): string[] =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/** Single words that name a secret. `tokens` (plural) counts them and is not one (`max_tokens`). */
const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'pwd',
  'pw',
  'pass',
  'passphrase',
  'secret',
  'secrets',
  'token',
  'apikey',
  'accesskey',
  'secretkey',
  'privatekey',
  'sslkey',
  'credential',
  'credentials',
  'creds',
  'cred',
  'authorization',
  'auth',
  'authentication',
  'bearer',
  'jwt',
]);

/** Words that make `… key` a secret (`api key`, `aws secret access key`); `key` alone is not one. */
const KEY_QUALIFIERS = new Set([
  'api',
  'access',
  'secret',
  'private',
  'signing',
  'encryption',
  'master',
  'client',
  'ssh',
  'ssl',
  'tls',
  'account',
  'shared',
  'session',
  'license',
  'subscription',
]);

/** Two-word names of a connection string: its URL password is masked, or all of it if no URL. */
const CONNECTION_WORDS = new Set(['connstr', 'connectionstring', 'dsn']);
const CONNECTION_PAIRS = new Set([
  'connection string',
  'conn string',
  'conn str',
  'connection url',
  'connection uri',
  'database url',
  'database uri',
  'db url',
  'db uri',
]);

/**
 * Words after a secret's name that make the key describe the secret rather than hold it:
 * `password_min_length`, `token_limit`, `auth_type`, `access_token_expires_at`, `secret_name`.
 */
const DESCRIBING_WORDS = new Set([
  'limit',
  'limits',
  'max',
  'min',
  'maximum',
  'minimum',
  'count',
  'length',
  'len',
  'size',
  'budget',
  'per',
  'rate',
  'ttl',
  'expiry',
  'expires',
  'expiration',
  'lifetime',
  'type',
  'method',
  'mode',
  'url',
  'uri',
  'endpoint',
  'enabled',
  'disabled',
  'required',
  'provider',
  'plugin',
  'mechanism',
  'source',
  'scheme',
  'policy',
  'strategy',
  'kind',
  'format',
  'name',
  'version',
]);

/** Words before a secret's name that make the key count it: `max_token`, `num_token`. */
const COUNTING_WORDS = new Set(['max', 'min', 'num', 'number', 'total', 'count']);

/** Compound words written without a separator: `dbpassword`, `accesstoken`, `clientsecret`. */
const secretCompound = (word: string) =>
  /password|passwd|secret|credential|apikey/.test(word) || (word.length > 5 && word.endsWith('token'));

/** Short words that name a secret only at the end of a key (`db_pass`, not `pass_through`). */
const LAST_ONLY = new Set(['pass', 'pw']);

type KeyKind = 'secret' | 'connection' | 'plain';

/** Where, among the words, the last secret name ends (−1: none) and where it starts. */
const lastSecretName = (words: readonly string[]): { start: number; end: number } | null => {
  let found: { start: number; end: number } | null = null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (LAST_ONLY.has(w) && i !== words.length - 1) continue;
    if (SECRET_WORDS.has(w) || secretCompound(w)) found = { start: i, end: i };
    else if (w === 'key' && i > 0 && KEY_QUALIFIERS.has(words[i - 1]!)) {
      // `aws secret access key` is one name: it starts at its first qualifier.
      let start = i - 1;
      while (start > 0 && (KEY_QUALIFIERS.has(words[start - 1]!) || SECRET_WORDS.has(words[start - 1]!)))
        start--;
      found = { start, end: i };
    }
  }
  return found;
};

const kindCache = new Map<string, KeyKind>();

/** How a key's value is masked: all of it, its connection-string secrets, or only URLs in it. */
export const keyKind = (key: string): KeyKind => {
  const cached = kindCache.get(key);
  if (cached) return cached;
  const words = keyWords(key);
  let kind: KeyKind = 'plain';
  const name = lastSecretName(words);
  if (name) {
    const after = words.slice(name.end + 1);
    const before = words.slice(0, name.start);
    if (!after.some((w) => DESCRIBING_WORDS.has(w)) && !before.some((w) => COUNTING_WORDS.has(w)))
      kind = 'secret';
  }
  if (kind === 'plain') {
    const pairs = words.slice(1).map((w, i) => `${words[i]} ${w}`);
    if (words.some((w) => CONNECTION_WORDS.has(w)) || pairs.some((p) => CONNECTION_PAIRS.has(p)))
      kind = 'connection';
  }
  // Keys come from a small vocabulary; the bound keeps hostile input from growing the cache.
  if (kindCache.size > 10_000) kindCache.clear();
  kindCache.set(key, kind);
  return kind;
};

export const isSecretKey = (key: string): boolean => keyKind(key) === 'secret';

/**
 * `scheme://user:password@host`: the password part (user and host stay visible). The password
 * runs to the last `@` of the URL: a password written with an unencoded `@` or `/` is still masked
 * whole (at worst, with an `@` later in the URL, more than the password is).
 */
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/[^\s/?#:]*:)(\S*)(@)/gi;
/** `?api_key=…&password=…` in a URL: secret parameters by the same key rule. */
const URL_PARAM = /([?&;])([^=&;#\s]+)=([^&;#\s]*)/g;
/** `Password=p w;` (ADO.NET, ODBC: `;` between pairs, values may hold blanks). */
const SEMICOLON_PAIRS = /(^|;)(\s*[A-Za-z][\w .-]*?)(\s*=\s*)('[^']*'|"[^"]*"|\{[^}]*\}|[^;]*)/g;
/** `password=pw host=h` (libpq: blanks between pairs, a value with blanks is quoted). */
const BLANK_PAIRS = /(^|\s)([A-Za-z][\w.-]*)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s]*)/g;

/** A string with URL passwords and secret URL parameters masked; others untouched. */
const maskInUrls = (text: string): string => {
  if (!text.includes('://')) return text;
  let out = text.replace(URL_USERINFO, (_m, head: string, pw: string, at: string) =>
    pw === '' ? `${head}${at}` : `${head}${MASK}${at}`,
  );
  if (out.includes('?'))
    out = out.replace(/[a-z][a-z0-9+.-]*:\/\/\S*/gi, (url) =>
      url.replace(URL_PARAM, (m, sep: string, name: string, value: string) => {
        let decoded = name;
        try {
          decoded = decodeURIComponent(name);
        } catch {
          // An undecodable name is judged as written.
        }
        return value !== '' && isSecretKey(decoded) ? `${sep}${name}=${MASK}` : m;
      }),
    );
  return out;
};

/** A connection string: a URL gets its password masked; a key=value list its secret values; else all. */
const maskConnectionString = (text: string): string => {
  if (/^\s*[a-z][a-z0-9+.-]*:\/\//i.test(text)) return maskInUrls(text);
  if (!text.includes('=')) return MASK;
  return text.replace(
    text.includes(';') ? SEMICOLON_PAIRS : BLANK_PAIRS,
    (m, sep: string, name: string, eq: string, value: string) =>
      value.trim() !== '' && isSecretKey(name.trim()) ? `${sep}${name}${eq}${MASK}` : m,
  );
};

const maskScalar = (value: unknown, mode: 'secret' | 'connection' | 'plain'): unknown => {
  if (value === null || value === undefined) return value;
  if (mode === 'secret') return MASK;
  if (typeof value !== 'string') return value;
  return mode === 'connection' ? maskConnectionString(value) : maskInUrls(value);
};

/**
 * Deeper than this, a value is shown as the mask as a whole rather than walked: MAX_JSON_DEPTH
 * admits at most 10,000 levels, and events add a few around the free-form values they carry.
 */
export const MAX_MASK_DEPTH = 10_100;

type Container = unknown[] | Record<string, unknown>;
const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

const setKey = (target: Container, key: string | number, value: unknown) => {
  // A plain assignment of "__proto__" would set the prototype instead of a key.
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string | number, unknown>)[key] = value;
};

/**
 * A deep copy with secrets masked: under a secret key, every value (a string, a number, each item of
 * an array, each leaf of an object) becomes the mask, `null` staying `null` (it says "not set");
 * connection strings and URLs anywhere keep everything but their passwords. Iterative, so no value
 * is too deep for it. `underKey` masks `value` as if it were stored under that key.
 */
export const maskSecrets = <T>(value: T, underKey?: string): T => {
  const rootMode = underKey === undefined ? 'plain' : keyKind(underKey);
  if (!isContainer(value)) return maskScalar(value, rootMode) as T;
  const copyOf = (v: Container): Container => (Array.isArray(v) ? new Array<unknown>(v.length) : {});
  const root = copyOf(value);
  const pending: { source: Container; target: Container; secret: boolean; depth: number }[] = [
    { source: value, target: root, secret: rootMode === 'secret', depth: 1 },
  ];
  while (pending.length > 0) {
    const { source, target, secret, depth } = pending.pop()!;
    const entries: [string | number, unknown][] = Array.isArray(source)
      ? source.map((v, i) => [i, v])
      : Object.entries(source);
    for (const [key, v] of entries) {
      // Items of an array take the mode of the key holding the array.
      const mode = secret ? 'secret' : typeof key === 'number' ? 'plain' : keyKind(key);
      if (!isContainer(v)) setKey(target, key, maskScalar(v, mode));
      else if (depth >= MAX_MASK_DEPTH) setKey(target, key, MASK);
      else {
        const copy = copyOf(v);
        setKey(target, key, copy);
        pending.push({ source: v, target: copy, secret: mode === 'secret', depth: depth + 1 });
      }
    }
  }
  return root as T;
};

/** Structural equality of JSON values, iterative (the values compared may be deep). */
const sameJson = (a: unknown, b: unknown): boolean => {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (!isContainer(x) || !isContainer(y) || Array.isArray(x) !== Array.isArray(y)) return false;
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    if (kx.length !== ky.length) return false;
    for (const k of kx) {
      if (!Object.prototype.hasOwnProperty.call(y, k)) return false;
      stack.push([(x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]]);
    }
  }
  return true;
};

/**
 * Clients echo back what they read, masks included. Wherever the incoming value is what a reader
 * was shown of the stored one, the stored value is kept, so a read-modify-write never overwrites a
 * password with the mask: `"******"` for a secret, `postgres://u:******@h/db` for a URL whose
 * password was masked, and under a secret key (whose every leaf is shown masked) each leaf sent
 * back as the mask. Anything else the client sent replaces what was stored. Objects and arrays of
 * the same length are matched item by item, iteratively and in one pass (linear in the value).
 */
export const keepMaskedSecrets = (
  incoming: Record<string, unknown>,
  stored: Record<string, unknown> | undefined,
): Record<string, unknown> => {
  type Frame = { incoming: Container; stored: Container | undefined; target: Container; secret: boolean };
  const root: Record<string, unknown> = {};
  const pending: Frame[] = [{ incoming, stored, target: root, secret: false }];
  while (pending.length > 0) {
    const frame = pending.pop()!;
    const entries: [string | number, unknown][] = Array.isArray(frame.incoming)
      ? frame.incoming.map((v, i) => [i, v])
      : Object.entries(frame.incoming);
    for (const [k, v] of entries) {
      const old = frame.stored;
      const has =
        old !== undefined &&
        Array.isArray(old) === Array.isArray(frame.incoming) &&
        Object.prototype.hasOwnProperty.call(old, k);
      const previous = has ? (old as Record<string | number, unknown>)[k] : undefined;
      const mode = frame.secret ? 'secret' : typeof k === 'number' ? 'plain' : keyKind(k);
      if (!has) {
        setKey(frame.target, k, v);
      } else if (
        mode === 'secret' &&
        !frame.secret &&
        isContainer(v) &&
        sameJson(maskSecrets(previous, String(k)), v)
      ) {
        // A whole secret object or array sent back as it was shown.
        setKey(frame.target, k, previous);
      } else if (typeof v === 'string') {
        const echoed =
          v === MASK ||
          (v.includes(MASK) && typeof previous === 'string' && maskScalar(previous, mode) === v);
        setKey(frame.target, k, echoed ? previous : v);
      } else if (
        isContainer(v) &&
        isContainer(previous) &&
        Array.isArray(v) === Array.isArray(previous) &&
        (!Array.isArray(v) || v.length === (previous as unknown[]).length)
      ) {
        const copy: Container = Array.isArray(v) ? new Array<unknown>(v.length) : {};
        setKey(frame.target, k, copy);
        pending.push({ incoming: v, stored: previous, target: copy, secret: mode === 'secret' });
      } else setKey(frame.target, k, v);
    }
  }
  return root;
};
