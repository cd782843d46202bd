import { isContainer, mapLeaves } from '../shared/jsonTree';
import { hideSecrets } from '../shared/secrets';
import { decryptSecret, encryptSecret, SecretUnavailableError, type DataKey } from './envelope';

/**
 * Sealing event data: every value a reader would see masked (by the rule of src/shared/secrets.ts:
 * values under secret keys, passwords inside URLs and connection strings) is replaced, before the
 * event enters the log, by its ciphertext under the resource's data key; unsealing puts it back.
 * The mask of sealed data equals the mask of the plain data, so projections, which read the log as
 * stored, hold exactly what they held before, and a rebuild equals the live read model.
 *
 * A whole value (a password, a number under a secret key) is sealed as its JSON text and comes back
 * with its type; a part of a string (a URL's password) is sealed as text and put back in place.
 */

const TOKEN = /enc:v1:([A-Za-z0-9_.-]{1,128}):[A-Za-z0-9_-]+/g;
const WHOLE = /^enc:v1:[A-Za-z0-9_.-]{1,128}:[A-Za-z0-9_-]+$/;

/** What a secret whose key was destroyed reads as, wherever it was (crypto-shredding). */
export const FORGOTTEN = '(forgotten)';

/**
 * Top-level event fields that the secret rule would take for secrets but that are how a resource is
 * found, and so are held in clear by the read model: a chatbot's webhook token routes inbound
 * webhooks to it, an access token's id is the token's public part, a session's id (a sign-in's or
 * an MCP client's) names its stream and is the public part of its cookie (the secret part is kept
 * as a hash). Readers still see them masked wherever the rule applies (the audit trail); the log
 * keeps them as they are.
 */
const IDENTIFYING_FIELDS = ['webhookToken', 'tokenId', 'sessionId'] as const;

export const withoutIdentifyingFields = (data: unknown): unknown => {
  if (!isContainer(data) || Array.isArray(data)) return data;
  if (!IDENTIFYING_FIELDS.some((f) => Object.hasOwn(data, f))) return data;
  const rest: Record<string, unknown> = { ...data };
  for (const f of IDENTIFYING_FIELDS) delete rest[f];
  return rest;
};

/** Whether `data` holds anything a reader would see masked that is not sealed yet. */
export const holdsPlainSecrets = (data: unknown): boolean => {
  let found = false;
  hideSecrets(withoutIdentifyingFields(data), (secret) => {
    if (!(typeof secret === 'string' && WHOLE.test(secret))) found = true;
    return secret;
  });
  return found;
};

/**
 * `data` with every secret sealed under `key`. A secret that is already ciphertext (a decision that
 * copied a sealed value along) is kept as it is: it stays readable with the key that sealed it.
 */
export const sealSecrets = <T>(data: T, key: DataKey): T => {
  const sealed = hideSecrets(data, (secret, whole) => {
    if (typeof secret === 'string' && WHOLE.test(secret)) return secret;
    return encryptSecret(whole ? JSON.stringify(secret) : String(secret), key);
  });
  if (sealed === data || !isContainer(data) || Array.isArray(data)) return sealed;
  // Put the identifying fields back as they were (assigning keeps the order of the keys).
  const out = sealed as Record<string, unknown>;
  for (const f of IDENTIFYING_FIELDS) if (Object.hasOwn(data, f)) out[f] = data[f];
  return sealed;
};

/** Visits every string of a JSON value, iteratively (event data may be deep). */
const eachString = (value: unknown, visit: (text: string) => void) => {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (typeof v === 'string') visit(v);
    // Not `push(...v)`: an array of 100k+ items (a skill's parameter) would overflow the call stack.
    else if (Array.isArray(v)) for (const item of v) pending.push(item);
    else if (isContainer(v)) for (const item of Object.values(v)) pending.push(item);
  }
};

/** The ids of the data keys `data` was sealed with (none: nothing to unseal). */
export const sealingKeyIds = (data: unknown): Set<string> => {
  const kids = new Set<string>();
  eachString(data, (text) => {
    if (!text.includes('enc:v1:')) return;
    for (const match of text.matchAll(TOKEN)) kids.add(match[1]!);
  });
  return kids;
};

/** A copy of `value` with each string mapped. */
const mapStrings = (value: unknown, map: (text: string) => unknown): unknown =>
  mapLeaves(value, (v) => (typeof v === 'string' ? map(v) : v));

/**
 * `data` with its secrets unsealed by the keys given (by id); a secret whose key is missing (it was
 * destroyed) or does not open reads as FORGOTTEN. Data without sealed secrets comes back as it is.
 */
export const unsealSecrets = <T>(data: T, keys: ReadonlyMap<string, DataKey>): T => {
  if (sealingKeyIds(data).size === 0) return data;
  const open = (token: string): string | undefined => {
    const kid = /^enc:v1:([^:]+):/.exec(token)?.[1] ?? '';
    const key = keys.get(kid);
    if (!key) return undefined;
    try {
      return decryptSecret(token, key);
    } catch (error) {
      if (error instanceof SecretUnavailableError) return undefined;
      throw error;
    }
  };
  return mapStrings(data, (text) => {
    if (!text.includes('enc:v1:')) return text;
    if (WHOLE.test(text)) {
      const plain = open(text);
      return plain === undefined ? FORGOTTEN : (JSON.parse(plain) as unknown);
    }
    return text.replace(TOKEN, (token) => open(token) ?? FORGOTTEN);
  }) as T;
};

// Which resource's key seals an event's secrets: resources.ts (the contract's declaration).
