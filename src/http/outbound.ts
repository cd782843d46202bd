import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import { forbidden, invalid, isDomainError } from '../shared/errors';

/**
 * The one outbound policy (OUTBOUND_ALLOW): every call this service makes to a destination a user
 * named or configured (an LLM or embeddings provider, a webhook, Slack's or Telegram's API, a file
 * URL, a database host) is checked here first. Public addresses are reached; loopback, link-local,
 * private and reserved ones are refused, unless OUTBOUND_ALLOW admits them: otherwise any user who
 * may create an agent, a knowledge base, a file or a database could make the server call its own
 * admin ports, a cloud metadata service or the internal network (SSRF).
 *
 * OUTBOUND_ALLOW, comma-separated: host names (`ollama.internal`), wildcard suffixes
 * (`*.internal`), addresses and CIDR blocks (`127.0.0.1`, `10.0.0.0/8`, `fd00::/8`). A name is
 * allowed when an entry names it, or when every address it resolves to is public or inside an
 * address entry. Numeric host forms (`2130706433`, `127.1`, `0x7f.1`) are read as the address they
 * stand for; IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) as their IPv4 address.
 */
export type OutboundPolicy = {
  /** The setting as given, for messages and the README. */
  readonly allowed: readonly string[];
  /** Throws 403 naming the host and OUTBOUND_ALLOW unless the policy admits it; the checked addresses. */
  checkHost(host: string, what: string): Promise<readonly dns.LookupAddress[]>;
  /** An http(s) URL's host checked as above (400 for another scheme or no URL at all). */
  checkUrl(url: string | URL, what: string): Promise<URL>;
  /**
   * The global fetch with each request's destination checked first, and redirects followed by hand
   * (at most MAX_REDIRECTS), each hop checked again; a request asking for `redirect: 'manual'` gets
   * the redirect answer, as with fetch.
   */
  readonly fetch: typeof fetch;
  /**
   * `lookup` for node:net/http sockets: resolves, refuses what the policy refuses, and hands the
   * checked addresses to the socket, so the connection goes where the check looked (no DNS rebinding).
   */
  readonly lookup: net.LookupFunction;
  /**
   * GETs a URL with node:http(s) through `lookup` (connected to the checked address), following
   * redirects by hand, each hop checked; answers the final 2xx/other answer's status and body.
   */
  get(
    url: string,
    what: string,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<{ status: number; body: Readable; url: URL }>;
};

export const MAX_REDIRECTS = 5;

/** Loopback, private, link-local, shared, reserved and multicast: refused unless OUTBOUND_ALLOW lists them. */
const NOT_PUBLIC = (() => {
  const blocks = new net.BlockList();
  const add = (cidr: string, type: 'ipv4' | 'ipv6') => {
    const [a, bits] = cidr.split('/');
    blocks.addSubnet(a!, Number(bits), type);
  };
  for (const cidr of [
    '0.0.0.0/8',
    '10.0.0.0/8',
    '100.64.0.0/10',
    '127.0.0.0/8',
    '169.254.0.0/16',
    '172.16.0.0/12',
    '192.0.0.0/24',
    '192.0.2.0/24',
    '192.168.0.0/16',
    '198.18.0.0/15',
    '198.51.100.0/24',
    '203.0.113.0/24',
    '224.0.0.0/4',
    '240.0.0.0/4',
  ])
    add(cidr, 'ipv4');
  for (const cidr of [
    '::/96',
    '64:ff9b::/96',
    '100::/64',
    '2001:db8::/32',
    'fc00::/7',
    'fe80::/10',
    'ff00::/8',
  ])
    add(cidr, 'ipv6');
  return blocks;
})();

/** The 8 groups of an IPv6 address, as numbers. */
const ipv6Groups = (address: string): number[] => {
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const parts = v4[1]!.split('.').map(Number);
    text = `${text.slice(0, -v4[1]!.length)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : new Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...middle, ...t].map((g) => parseInt(g || '0', 16));
};

/** An address as it is checked: IPv4-mapped IPv6 (`::ffff:7f00:1`) becomes its IPv4 address. */
export const canonicalAddress = (address: string): { address: string; family: 4 | 6 } => {
  const a = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (net.isIPv4(a)) return { address: a, family: 4 };
  const g = ipv6Groups(a.toLowerCase());
  if (g.length === 8 && g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff)
    return { address: [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.'), family: 4 };
  return { address: a.toLowerCase(), family: 6 };
};

export const isPublicAddress = (address: string) => {
  const c = canonicalAddress(address);
  return !NOT_PUBLIC.check(c.address, c.family === 4 ? 'ipv4' : 'ipv6');
};

/**
 * A host as URLs read it: lower case, no brackets or final dot, and numeric IPv4 forms (`127.1`,
 * `2130706433`, `0x7f.1`, `0177.0.0.1`) as the dotted address they stand for.
 */
export const canonicalHost = (host: string): string => {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (net.isIP(h)) return net.isIPv6(h) ? canonicalAddress(h).address : h;
  try {
    const parsed = new URL(`http://${h.includes(':') ? `[${h}]` : h}/`).hostname.replace(/^\[|\]$/g, '');
    return net.isIPv6(parsed) ? canonicalAddress(parsed).address : parsed;
  } catch {
    return h;
  }
};

/** An allow-list (OUTBOUND_ALLOW's grammar, also DB_HOST_ALLOWLIST's): names, `*.suffixes`, addresses, CIDRs. */
export const parseAllowList = (text: string | undefined, setting: string) => {
  const entries = (text ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  const blocks = new net.BlockList();
  const names: string[] = [];
  const suffixes: string[] = [];
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const family = net.isIP(address!);
    if (family !== 0) {
      const canonical = canonicalAddress(address!);
      const type = canonical.family === 4 ? 'ipv4' : 'ipv6';
      if (bits === undefined) {
        blocks.addAddress(canonical.address, type);
        // The machine's loopback is one host on both families: `localhost` resolves to both.
        if (canonical.address === '127.0.0.1') blocks.addAddress('::1', 'ipv6');
        if (canonical.address === '::1') blocks.addAddress('127.0.0.1', 'ipv4');
      } else {
        const prefix = Number(bits);
        const max = family === 4 ? 32 : 128;
        if (!Number.isInteger(prefix) || prefix < 0 || prefix > max)
          throw new Error(`${setting}: '${entry}' is not a CIDR block`);
        blocks.addSubnet(address!, prefix, family === 4 ? 'ipv4' : 'ipv6');
      }
    } else if (entry.startsWith('*.')) suffixes.push(entry.slice(1));
    else if (/^[a-z0-9_]([a-z0-9_.-]*[a-z0-9])?$/.test(entry)) names.push(entry);
    else throw new Error(`${setting}: '${entry}' is neither a host name, an address nor a CIDR block`);
  }
  return {
    entries,
    names: (host: string) => names.includes(host) || suffixes.some((s) => host.endsWith(s)),
    addresses: (address: string) => {
      const c = canonicalAddress(address);
      return blocks.check(c.address, c.family === 4 ? 'ipv4' : 'ipv6');
    },
  };
};

const lookupAll = (host: string) =>
  new Promise<dns.LookupAddress[]>((resolve, reject) =>
    dns.lookup(host, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export const outboundPolicy = (allowText: string | undefined): OutboundPolicy => {
  const allow = parseAllowList(allowText, 'OUTBOUND_ALLOW');
  const refuse = (what: string, host: string, why: string) =>
    forbidden(
      `${what}: the destination ${host} is refused (${why}). Outbound calls reach public addresses only, unless OUTBOUND_ALLOW lists the host or its address.`,
      'Destination not allowed',
    );

  const admitted = (addresses: readonly dns.LookupAddress[]) =>
    addresses.find((a) => !isPublicAddress(a.address) && !allow.addresses(a.address));

  const checkHost = async (rawHost: string, what: string) => {
    const host = canonicalHost(rawHost);
    if (!host) throw invalid(`${what}: no host to call`, 'Invalid destination');
    if (net.isIP(host)) {
      const addresses = [{ address: host, family: net.isIP(host) }];
      if (admitted(addresses)) throw refuse(what, rawHost, `${host} is not a public address`);
      return addresses;
    }
    const addresses = await lookupAll(host).catch(() => {
      throw refuse(what, rawHost, 'the name does not resolve');
    });
    if (allow.names(host)) return addresses;
    const refused = admitted(addresses);
    if (addresses.length === 0 || refused)
      throw refuse(
        what,
        rawHost,
        refused ? `it resolves to ${refused.address}, not a public address` : 'the name does not resolve',
      );
    return addresses;
  };

  const checkUrl = async (raw: string | URL, what: string) => {
    let url: URL;
    try {
      url = typeof raw === 'string' ? new URL(raw) : raw;
    } catch {
      throw invalid(`${what}: not a URL`, 'Invalid destination');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw invalid(
        `${what}: only http and https URLs can be called (not ${url.protocol})`,
        'Invalid destination',
      );
    await checkHost(url.hostname, what);
    return url;
  };

  const guardedFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const href = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    let url = await checkUrl(href, 'Outbound request');
    if (typeof input !== 'string' && !(input instanceof URL)) return fetch(input, init);
    if (init?.redirect === 'manual' || init?.redirect === 'error') return fetch(url, init);
    let current: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const response = await fetch(url, current);
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || !location) return response;
      await response.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS)
        throw invalid(`More than ${MAX_REDIRECTS} redirects from ${url.host}`, 'Too many redirects');
      const next = await checkUrl(new URL(location, url), 'Outbound request (redirected)');
      const method = (current.method ?? 'GET').toUpperCase();
      const toGet =
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === 'POST');
      const headers = new Headers(current.headers);
      // Credentials were given for the first origin only.
      if (next.origin !== url.origin) {
        headers.delete('authorization');
        headers.delete('api-key');
        headers.delete('cookie');
      }
      current = toGet ? { ...current, method: 'GET', body: undefined, headers } : { ...current, headers };
      url = next;
    }
  }) as typeof fetch;

  const lookup: net.LookupFunction = (hostname, options, callback) => {
    checkHost(hostname, 'Outbound connection').then(
      (addresses) => {
        const family = typeof options.family === 'number' ? options.family : 0;
        const usable = addresses.filter((a) => family === 0 || a.family === family);
        if (usable.length === 0) {
          callback(
            Object.assign(new Error(`no IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }),
            '',
            0,
          );
          return;
        }
        if (options.all) (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };

  const getOnce = (url: URL, signal: AbortSignal | undefined, timeoutMs: number) =>
    new Promise<http.IncomingMessage>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).get(
        url,
        { lookup, signal, timeout: timeoutMs },
        resolve,
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      request.on('error', reject);
    });

  const get: OutboundPolicy['get'] = async (raw, what, options = {}) => {
    let url = await checkUrl(raw, what);
    for (let hop = 0; ; hop++) {
      let response: http.IncomingMessage;
      try {
        response = await getOnce(url, options.signal, options.timeoutMs ?? 30_000);
      } catch (error) {
        // The socket's lookup refused the address it found (a name that changed its answer).
        if (isDomainError(error)) throw error;
        throw invalid(`${what}: could not fetch ${url.host}: ${(error as Error).message}`, 'Invalid URL');
      }
      const location = response.headers.location;
      if (!REDIRECTS.has(response.statusCode ?? 0) || !location)
        return { status: response.statusCode ?? 0, body: response, url };
      response.resume();
      if (hop >= MAX_REDIRECTS)
        throw invalid(`${what}: more than ${MAX_REDIRECTS} redirects`, 'Too many redirects');
      url = await checkUrl(new URL(location, url), `${what} (redirected)`);
    }
  };

  return { allowed: allow.entries, checkHost, checkUrl, fetch: guardedFetch, lookup, get };
};
