/**
 * Which keys name secrets. The rule is by the key's words, normalised, so `password`,
 * `DB_PASSWORD`, `dbPassword`, `aws_secret_access_key`, `awsSecretAccessKey`, `api-key`,
 * `X-Api-Key`, `Authorization`, a provider's `OPENAI_KEY`/`anthropic_key`/`storage_key` (a last
 * word `key` after any word but a data key's: `primary_key`, `sort_key`, `partition_key` are not),
 * `cookie`/`set-cookie`, `keyfile_json`, `session_id`, `client_assertion` and `refresh` (alone) are
 * all secrets, while keys that describe or count one
 * (`password_min_length`, `max_tokens`, `key_column`) are not; `connection_string`/`dsn` keys hold
 * connection strings whose passwords are secrets. In a URL, parameters such as `sig`, `signature`,
 * `key` and `X-Amz-Signature` are secrets too (isSecretUrlParameter).
 */
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
  // Cookies carry sessions: `cookie`, `set-cookie`, `headers.Cookie`.
  'cookie',
  'cookies',
  'setcookie',
  // A service account's key file (BigQuery's `keyfile`, `keyfile_json`).
  'keyfile',
  // A session's id is its bearer (`session_id`, `sessionId`: pairs below); an OAuth client's signed
  // assertion stands for its secret (`client_assertion`).
  'sessionid',
  'clientassertion',
]);

/** Two words that name a secret together, though neither does alone: `session_id`, `client_assertion`. */
const SECRET_PAIRS = new Set(['session id', 'client assertion', 'saml assertion', 'jwt assertion']);

/** Words that name a secret only as the whole key: `refresh` (an OAuth refresh token), not `auto_refresh`. */
const WHOLE_KEY_ONLY = new Set(['refresh']);

/**
 * `… key` as a key's last word names a provider's key (`OPENAI_KEY`, `anthropic_key`,
 * `storage_key`), unless the word before says it is a key of data: these are not secrets.
 */
const DATA_KEY_QUALIFIERS = new Set([
  'primary',
  'foreign',
  'unique',
  'sort',
  'sorting',
  'partition',
  'partitioning',
  'cluster',
  'clustering',
  'distribution',
  'shard',
  'sharding',
  'hash',
  'range',
  'row',
  'column',
  'composite',
  'compound',
  'natural',
  'surrogate',
  'candidate',
  'business',
  'join',
  'lookup',
  'index',
  'cache',
  'dedup',
  'dedupe',
  'deduplication',
  'idempotency',
  'routing',
  'message',
  'group',
  'order',
  'search',
  'map',
  'dict',
  'json',
  'field',
  'metadata',
  'tag',
  'label',
  'object',
  'id',
  'public',
  'parent',
  'child',
  'entity',
  'record',
  'document',
  'doc',
  'content',
  'text',
  'name',
  'value',
  'target',
  'time',
  'date',
  'event',
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

/**
 * `sql`: the key holds SQL text (a job's `query`, a trigger's, a recorded statement), whose option
 * lists (`USING`, `SET`, `PARAMETERS`) are read for secrets as the statement's parser reads them.
 */
export type KeyKind = 'secret' | 'connection' | 'sql' | 'plain';

/** Last words of a key holding SQL text: `query`, `ifQuery`, `sql`, `statement`. */
const SQL_WORDS = new Set(['query', 'sql', 'statement', 'statements']);

/** Where, among the words, the last secret name ends (−1: none) and where it starts. */
const lastSecretName = (words: readonly string[]): { start: number; end: number } | null => {
  let found: { start: number; end: number } | null = null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (LAST_ONLY.has(w) && i !== words.length - 1) continue;
    if (SECRET_WORDS.has(w) || secretCompound(w)) found = { start: i, end: i };
    else if (i > 0 && SECRET_PAIRS.has(`${words[i - 1]} ${w}`)) found = { start: i - 1, end: i };
    else if (WHOLE_KEY_ONLY.has(w) && words.length === 1) found = { start: i, end: i };
    else if (
      w === 'key' &&
      i > 0 &&
      i === words.length - 1 &&
      !KEY_QUALIFIERS.has(words[i - 1]!) &&
      !DATA_KEY_QUALIFIERS.has(words[i - 1]!) &&
      !COUNTING_WORDS.has(words[i - 1]!) &&
      !/^\d+$/.test(words[i - 1]!)
    )
      found = { start: i - 1, end: i };
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
  if (kind === 'plain' && words.length > 0 && SQL_WORDS.has(words[words.length - 1]!)) kind = 'sql';
  // Keys come from a small vocabulary; the bound keeps hostile input from growing the cache.
  if (kindCache.size > 10_000) kindCache.clear();
  kindCache.set(key, kind);
  return kind;
};

export const isSecretKey = (key: string): boolean => keyKind(key) === 'secret';

/** URL query parameters that carry a secret though their name alone would not be one elsewhere. */
const URL_SECRET_PARAMETERS = new Set([
  'sig',
  'signature',
  'key',
  'code',
  'x amz signature',
  'x amz credential',
  'x amz security token',
  'x goog signature',
  'x goog credential',
]);

/** A URL query parameter holding a secret: by the key rule, or one of the signing parameters. */
export const isSecretUrlParameter = (name: string): boolean =>
  isSecretKey(name) || URL_SECRET_PARAMETERS.has(keyWords(name).join(' '));
