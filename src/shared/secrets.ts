/**
 * Which values are secrets, and how readers see them. The log keeps every secret sealed under its
 * resource's data key (src/ledger/sealing.ts, by this same rule: `hideSecrets`), opened for the
 * code that needs it (a connection needs the real password); the projections, the audit endpoint
 * and every answer hold `maskSecrets` of it. The rule is by key name, normalised, so `password`, `DB_PASSWORD`,
 * `dbPassword`, `aws_secret_access_key`, `awsSecretAccessKey`, `api-key`, `X-Api-Key` and
 * `Authorization` are all secrets, and by value shape, wherever the value is (under any key, inside
 * any text): a URL's userinfo password (`postgres://u:pw@h/db`) and its secret query parameters, an
 * ADO.NET/ODBC connection string's `Password=`/`Pwd=`, a PEM private key block, and tokens known by
 * their prefix (SECRET_SHAPES).
 *
 * Changing these rules changes what projections hold: SECRET_RULES_VERSION is part of the read
 * model's fingerprint, so bumping it rebuilds the tables with the new rules at the next start.
 */
import { emptyLike, entriesOf, isContainer, setKey, type Container } from './jsonTree';
import { invalid } from './errors';
import { isSecretKey, isSecretUrlParameter, keyKind, keyWords, type KeyKind } from './secretKeys';
import { sqlOptionValues } from './sqlOptions';

export const SECRET_RULES_VERSION = 5;

/** What every reader shows instead of a secret. A write that sends it back keeps the stored value. */
export const MASK = '******';

export { keyKind, keyWords } from './secretKeys';

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
/** A `;`-separated list of pairs holding a password (ADO.NET, ODBC): `…;Password=…;`, `Pwd=…`. */
const PAIRS_WITH_PASSWORD = /(?:^|;)\s*(?:password|pwd)\s*=/i;
/** `password=pw host=h` (libpq: blanks between pairs, a value with blanks is quoted). */
const BLANK_PAIRS = /(^|\s)([A-Za-z][\w.-]*)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s]*)/g;

/**
 * What takes a secret's place: the mask for readers; a ciphertext before the log (src/ledger).
 * `whole`: the secret is a whole value (any JSON scalar); otherwise it is part of a string (a URL's
 * password, a `key=value` pair's value) and is text.
 */
type HideSecret = (secret: unknown, whole: boolean) => unknown;
const showMask: HideSecret = () => MASK;

/** A string with URL passwords and secret URL parameters hidden; others untouched. */
const hideInUrls = (text: string, hide: HideSecret): string => {
  if (!text.includes('://')) return text;
  let out = text.replace(URL_USERINFO, (_m, head: string, pw: string, at: string) =>
    pw === '' ? `${head}${at}` : `${head}${String(hide(pw, false))}${at}`,
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
        return value !== '' && isSecretUrlParameter(decoded)
          ? `${sep}${name}=${String(hide(value, false))}`
          : m;
      }),
    );
  // A webhook's URL is its key: Slack's `/services/T…/B…/<secret>`, Discord's `/webhooks/<id>/<secret>`.
  return out.replace(
    WEBHOOK_PATH,
    (_m, head: string, secret: string) => `${head}${String(hide(secret, false))}`,
  );
};

const WEBHOOK_PATH =
  /(:\/\/[^\s/]+\/(?:services\/[^\s/?#]+\/[^\s/?#]+|(?:api\/)?webhooks\/[^\s/?#]+)\/)([^\s/?#]+)/gi;

/** `"key": "value"` in JSON text: the raw (still escaped) value, hidden in place. */
const JSON_STRING_MEMBER = /("((?:[^"\\]|\\.)*)"\s*:\s*")((?:[^"\\]|\\.)*)(")/g;

/**
 * A string that is a JSON object or array (a service account's key file pasted whole): each string under a
 * secret key is hidden inside it, in place and as written (escapes kept), so the rest stays
 * readable and sealing gives back the very text. If a secret there is not a plain string (an
 * object, a number), the whole string is hidden. Undefined when the text is no JSON object or holds
 * no secret.
 */
const hideInJsonText = (text: string, hide: HideSecret): unknown => {
  const trimmed = text.trim();
  const object = trimmed.startsWith('{') && trimmed.endsWith('}');
  const array = trimmed.startsWith('[') && trimmed.endsWith(']');
  // JSON text of a string (JSON encoded twice) is judged by the string it holds, and hidden whole.
  const quoted = trimmed.length > 1 && trimmed.startsWith('"') && trimmed.endsWith('"');
  if ((!object && !array && !quoted) || trimmed.length > 1_000_000) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof parsed === 'string') {
    let found = false;
    hideSecrets(parsed, () => {
      found = true;
      return MASK;
    });
    return found ? hide(text, true) : undefined;
  }
  let secrets = 0;
  let plainStrings = true;
  hideSecrets(parsed, (secret, whole) => {
    secrets++;
    if (!whole || typeof secret !== 'string') plainStrings = false;
    return secret;
  });
  if (secrets === 0) return undefined;
  if (!plainStrings) return hide(text, true);
  let hidden = 0;
  const out = text.replace(
    JSON_STRING_MEMBER,
    (m, head: string, rawKey: string, value: string, end: string) => {
      let key: string;
      try {
        key = JSON.parse(`"${rawKey}"`) as string;
      } catch {
        return m;
      }
      if (!isSecretKey(key) || value === '') return m;
      hidden++;
      return `${head}${String(hide(value, false))}${end}`;
    },
  );
  return hidden >= secrets ? out : hide(text, true);
};

/** `key=value` pairs (`;`-separated, or blank-separated as libpq's) with the secret ones' values hidden. */
const hideInPairs = (text: string, pairs: RegExp, hide: HideSecret): string =>
  text.replace(pairs, (m, sep: string, name: string, eq: string, value: string) =>
    value.trim() !== '' && isSecretKey(name.trim()) ? `${sep}${name}${eq}${String(hide(value, false))}` : m,
  );

/** A connection string: a URL gets its password hidden; a key=value list its secret values; else all. */
const hideInConnectionString = (text: string, hide: HideSecret): unknown => {
  if (/^\s*[a-z][a-z0-9+.-]*:\/\//i.test(text)) return hideInUrls(text, hide);
  if (!text.includes('=')) return hide(text, true);
  return hideInPairs(text, text.includes(';') ? SEMICOLON_PAIRS : BLANK_PAIRS, hide);
};

/** What follows a token: its match runs on over these, so a sealed token is never followed by one. */
const TOKEN_TAIL = '[A-Za-z0-9_-]*';

/**
 * Secrets known by their shape, under any key and inside any text: a PEM private key block (to its
 * END line, or to the end of the text), GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
 * `github_pat_`), OpenAI/Anthropic keys (`sk-…` with a run of 20 letters and digits: not `sk-learn`),
 * Slack tokens (`xoxb-`, `xoxp-`, …), AWS access key ids (`AKIA…`, `ASIA…`) and JWTs (`eyJ….eyJ….…`).
 * Each is hidden in place (the whole value when it is the whole string). A sealed secret
 * (`enc:v1:<key id>:…`, src/ledger/sealing.ts) is one too, and is matched first: the mask of a
 * sealed text is the mask of the plain one, and nothing is looked for inside a ciphertext. A match
 * runs on over the letters, digits, `_` and `-` after it (TOKEN_TAIL): a sealed token, whose
 * ciphertext is of those, must not run into the text after it.
 */
const SECRET_SHAPES = new RegExp(
  [
    'enc:v1:[A-Za-z0-9_.-]{1,128}:[A-Za-z0-9_-]+',
    `-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY-----[\\s\\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY-----${TOKEN_TAIL}|$)`,
    `(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20}|github_pat_[A-Za-z0-9_]{20})${TOKEN_TAIL}`,
    `(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]*?[A-Za-z0-9]{20}${TOKEN_TAIL}`,
    `(?<![A-Za-z0-9])xox[abeoprs]-[A-Za-z0-9]+-[A-Za-z0-9-]{8}${TOKEN_TAIL}`,
    `(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}${TOKEN_TAIL}`,
    `(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.${TOKEN_TAIL}`,
  ].join('|'),
  'g',
);

/** A text with the secrets known by their shape hidden; the whole value when one is all of it. */
const hideByShape = (value: unknown, hide: HideSecret): unknown => {
  if (typeof value !== 'string' || value.length < 16) return value;
  SECRET_SHAPES.lastIndex = 0;
  const first = SECRET_SHAPES.exec(value);
  if (!first) return value;
  if (first.index === 0 && first[0].length === value.length) return hide(value, true);
  return value.replace(SECRET_SHAPES, (secret) => String(hide(secret, false)));
};

/**
 * A string that is not JSON text: its URLs' secrets, an ADO.NET/ODBC connection string's password
 * (`Server=x;User Id=u;Password=…;`: the value only, as under a `connection_string` key) and the
 * secrets known by their shape.
 */
const hideInText = (text: string, hide: HideSecret): unknown => {
  let out = hideInUrls(text, hide);
  if (out.includes(';') && PAIRS_WITH_PASSWORD.test(out)) out = hideInPairs(out, SEMICOLON_PAIRS, hide);
  return hideByShape(out, hide);
};

/**
 * SQL text with the secrets of its option lists hidden in place (src/shared/sqlOptions.ts): a value
 * under a secret key, a connection string's password, a secret inside a JSON string. Each is hidden
 * as the text it is written as (escapes kept), so sealing gives back the very statement and the mask
 * of a sealed text is the mask of the plain one.
 */
const hideInSqlText = (text: string, hide: HideSecret): string => {
  const values = sqlOptionValues(text);
  if (values.length === 0) return text;
  // Inside a statement every secret is a part of the text, never a whole value with a type.
  const hidePart: HideSecret = (secret) =>
    hide(typeof secret === 'string' ? secret : JSON.stringify(secret), false);
  let out = '';
  let at = 0;
  for (const v of values) {
    const raw = text.slice(v.start, v.end);
    let hidden: unknown = raw;
    if (v.mode === 'secret') hidden = hidePart(raw, false);
    else if (v.mode === 'connection' && v.quoted) hidden = hideInConnectionString(raw, hidePart);
    else if (v.quoted) hidden = hideInJsonText(raw, hidePart) ?? hideInText(raw, hidePart);
    if (hidden === raw) continue;
    out += text.slice(at, v.start) + String(hidden);
    at = v.end;
  }
  return at === 0 ? text : out + text.slice(at);
};

const hideScalar = (value: unknown, mode: KeyKind, hide: HideSecret): unknown => {
  if (value === null || value === undefined) return value;
  if (mode === 'secret') return hide(value, true);
  if (typeof value !== 'string') return value;
  if (mode === 'connection') return hideByShape(hideInConnectionString(value, hide), hide);
  if (mode === 'sql') return hideByShape(hideInUrls(hideInSqlText(value, hide), hide), hide);
  return hideInJsonText(value, hide) ?? hideInText(value, hide);
};

const maskScalar = (value: unknown, mode: KeyKind): unknown => hideScalar(value, mode, showMask);

/**
 * Deeper than this, a value is shown as the mask as a whole rather than walked: MAX_JSON_DEPTH
 * admits at most 10,000 levels, and events add a few around the free-form values they carry.
 */
const MAX_MASK_DEPTH = 10_100;

/**
 * A deep copy with every secret replaced by what `hide` gives for it: under a secret key, every
 * value (a string, a number, each item of an array, each leaf of an object), `null` staying `null`
 * (it says "not set"); in connection strings and URLs anywhere, only their passwords. Iterative, so
 * no value is too deep for it; deeper than MAX_MASK_DEPTH a value is hidden whole (as its JSON
 * text). `underKey` treats `value` as if it were stored under that key.
 */
export const hideSecrets = <T>(value: T, hide: HideSecret, underKey?: string): T => {
  const rootMode = underKey === undefined ? 'plain' : keyKind(underKey);
  if (!isContainer(value)) return hideScalar(value, rootMode, hide) as T;
  const root = emptyLike(value);
  const pending: { source: Container; target: Container; secret: boolean; depth: number }[] = [
    { source: value, target: root, secret: rootMode === 'secret', depth: 1 },
  ];
  while (pending.length > 0) {
    const { source, target, secret, depth } = pending.pop()!;
    for (const [key, v] of entriesOf(source)) {
      // Items of an array take the mode of the key holding the array.
      const mode = secret ? 'secret' : typeof key === 'number' ? 'plain' : keyKind(key);
      if (!isContainer(v)) setKey(target, key, hideScalar(v, mode, hide));
      else if (depth >= MAX_MASK_DEPTH) setKey(target, key, hide(v, true));
      else {
        const copy = emptyLike(v);
        setKey(target, key, copy);
        pending.push({ source: v, target: copy, secret: mode === 'secret', depth: depth + 1 });
      }
    }
  }
  return root as T;
};

/**
 * A deep copy with secrets masked: under a secret key, every value becomes the mask, `null` staying
 * `null`; connection strings and URLs anywhere keep everything but their passwords.
 */
export const maskSecrets = <T>(value: T, underKey?: string): T => hideSecrets(value, showMask, underKey);

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
    for (const [k, v] of entriesOf(frame.incoming)) {
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
        const copy = emptyLike(v);
        setKey(frame.target, k, copy);
        pending.push({ incoming: v, stored: previous, target: copy, secret: mode === 'secret' });
      } else setKey(frame.target, k, v);
    }
  }
  return root;
};

/**
 * Keys that say where a secret is sent: a host, a port, a URL, a provider or engine (whose default
 * URL it implies). `base_url`, `openai_api_base`, `anthropic_api_url`, `host`, `port`, `url`, ….
 */
const isDestinationKey = (key: string): boolean => {
  const words = keyWords(key);
  const last = words[words.length - 1];
  return (
    last !== undefined &&
    ['host', 'hostname', 'port', 'url', 'uri', 'base', 'endpoint', 'server', 'provider', 'engine'].includes(
      last,
    )
  );
};

type Paths = Map<string, string>;

/** Path → JSON of every value under a key `pick` selects (not descending into it). Iterative. */
const valuesUnder = (root: Record<string, unknown>, pick: (key: string) => boolean): Paths => {
  const out: Paths = new Map();
  const pending: { value: Container; path: string }[] = [{ value: root, path: '' }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    for (const [k, v] of entriesOf(value)) {
      const here = typeof k === 'number' ? `${path}[${k}]` : path ? `${path}.${k}` : k;
      if (typeof k === 'string' && pick(k)) out.set(here, JSON.stringify(v) ?? 'undefined');
      else if (isContainer(v)) pending.push({ value: v, path: here });
    }
  }
  return out;
};

/**
 * A secret is bound to the destination it was stored with. When a write changes where a resource
 * sends its secrets (a host, a port, a base URL, a provider), every secret it keeps must come in
 * this very write: a mask echoed back, or a secret left out that the stored value would fill,
 * no longer stands for the stored one. Throws a 400 naming the first such field; `sent` is what the
 * client sent, `stored` what was stored, `result` what would be stored.
 */
export const requireSecretsForNewDestination = (
  sent: Record<string, unknown>,
  stored: Record<string, unknown> | undefined,
  result: Record<string, unknown>,
  extraChange?: string,
): void => {
  if (!stored) return;
  const before = valuesUnder(stored, isDestinationKey);
  const after = valuesUnder(result, isDestinationKey);
  const changed =
    extraChange ??
    [...new Set([...before.keys(), ...after.keys()])].find((p) => before.get(p) !== after.get(p));
  if (changed === undefined) return;
  const isSecret = (k: string) => keyKind(k) === 'secret';
  const kept = valuesUnder(result, isSecret);
  if (kept.size === 0) return;
  const given = valuesUnder(sent, isSecret);
  for (const path of kept.keys()) {
    const value = given.get(path);
    if (value === undefined || value.includes(MASK))
      throw invalid(
        `${path} must be sent again: ${changed} changed, and a stored secret goes only to the destination it was stored for ("${MASK}" or leaving it out no longer stands for it)`,
        'Secret must be sent again',
      );
  }
};
