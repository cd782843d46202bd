import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import { Agent } from 'undici';
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
 * stand for; IPv4-mapped and IPv4-translated IPv6 addresses (`::ffff:127.0.0.1`, `::ffff:0:7f00:1`)
 * as their IPv4 address; NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are public only if
 * the IPv4 address they carry is.
 *
 * Local-first: while sign-in is off (no admin yet), the service serves loopback only, so its one user
 * is on this machine already: loopback and private destinations (LOCAL_FIRST_BLOCKS) are reached
 * too, as a local database or a local LLM is the first thing a new user connects. The policy asks the
 * sign-in state it follows (followSignIn) at each check, so it tightens the moment an admin is made.
 * OUTBOUND_LOCAL_FIRST=false turns this off.
 *
 * Every HTTP call (fetch, get) connects to the address the check admitted: its socket's `lookup` is
 * the check (no DNS rebinding between the check and the connection).
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
   * Local-first (OUTBOUND_LOCAL_FIRST): the sign-in state the policy follows, asked at each check that
   * meets a loopback or private address. Until it is given, sign-in counts as on (the strict policy).
   */
  followSignIn(signInOn: () => boolean | Promise<boolean>): void;
  /** The start-up line saying which policy applies while sign-in is off, and how to change it. */
  readonly localFirstNotice: string;
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

const MAX_REDIRECTS = 5;

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
    // NAT64's well-known prefix (64:ff9b::/96) is judged by the IPv4 address it carries (embeddedIpv4);
    // its local-use prefix reaches only this network's own.
    '64:ff9b:1::/48',
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

const dotted = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/**
 * An address as it is checked: IPv4-mapped (`::ffff:7f00:1`, ::ffff:0:0/96) and IPv4-translated
 * (`::ffff:0:7f00:1`, ::ffff:0:0:0/96) IPv6 addresses stand for the IPv4 host itself, and become it.
 */
const canonicalAddress = (address: string): { address: string; family: 4 | 6 } => {
  const a = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (net.isIPv4(a)) return { address: a, family: 4 };
  const g = ipv6Groups(a.toLowerCase());
  if (g.length === 8 && g.slice(0, 4).every((x) => x === 0)) {
    if (g[4] === 0 && g[5] === 0xffff) return { address: dotted(g[6]!, g[7]!), family: 4 };
    if (g[4] === 0xffff && g[5] === 0) return { address: dotted(g[6]!, g[7]!), family: 4 };
  }
  return { address: a.toLowerCase(), family: 6 };
};

/**
 * The IPv4 address an IPv6 one carries to a gateway that reaches it: NAT64 (64:ff9b::/96, its last
 * 32 bits) and 6to4 (2002::/16, bits 16 to 48). Undefined for any other address.
 */
const embeddedIpv4 = (address: string): string | undefined => {
  const g = ipv6Groups(address);
  if (g.length !== 8) return undefined;
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return dotted(g[6]!, g[7]!);
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!);
  return undefined;
};

export const isPublicAddress = (address: string): boolean => {
  const c = canonicalAddress(address);
  if (NOT_PUBLIC.check(c.address, c.family === 4 ? 'ipv4' : 'ipv6')) return false;
  const carried = c.family === 6 ? embeddedIpv4(c.address) : undefined;
  return carried === undefined || isPublicAddress(carried);
};

/** What local-first admits besides public addresses while sign-in is off: loopback and private. */
const LOCAL_FIRST_BLOCKS = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '::1/128',
  'fc00::/7',
] as const;

const LOCAL = (() => {
  const blocks = new net.BlockList();
  for (const cidr of LOCAL_FIRST_BLOCKS) {
    const [a, bits] = cidr.split('/');
    blocks.addSubnet(a!, Number(bits), net.isIPv4(a!) ? 'ipv4' : 'ipv6');
  }
  return blocks;
})();

/**
 * A loopback or private address of this machine's networks. An address a NAT64 or 6to4 gateway
 * reaches is the gateway's network's, not ours: not local.
 */
const isLocalAddress = (address: string): boolean => {
  const c = canonicalAddress(address);
  return LOCAL.check(c.address, c.family === 4 ? 'ipv4' : 'ipv6');
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

export const outboundPolicy = (
  allowText: string | undefined,
  options: { localFirst?: boolean } = {},
): OutboundPolicy => {
  const allow = parseAllowList(allowText, 'OUTBOUND_ALLOW');
  const localFirst = options.localFirst ?? true;
  let signInOn: () => boolean | Promise<boolean> = () => true;
  const refuse = (what: string, host: string, why: string) =>
    forbidden(
      `${what}: the destination ${host} is refused (${why}). Outbound calls reach public addresses only, unless OUTBOUND_ALLOW lists the host or its address.`,
      'Destination not allowed',
    );

  /** The first address the policy refuses (undefined: all admitted). */
  const refusedOf = async (addresses: readonly dns.LookupAddress[]) => {
    const outside = addresses.filter((a) => !isPublicAddress(a.address) && !allow.addresses(a.address));
    if (outside.length === 0) return undefined;
    // Local-first: sign-in is asked only when a loopback or private address is met.
    if (localFirst && outside.every((a) => isLocalAddress(a.address)) && !(await signInOn()))
      return undefined;
    return outside[0];
  };

  const checkHost = async (rawHost: string, what: string) => {
    const host = canonicalHost(rawHost);
    if (!host) throw invalid(`${what}: no host to call`, 'Invalid destination');
    if (net.isIP(host)) {
      const addresses = [{ address: host, family: net.isIP(host) }];
      if (await refusedOf(addresses)) throw refuse(what, rawHost, `${host} is not a public address`);
      return addresses;
    }
    const addresses = await lookupAll(host).catch(() => {
      throw refuse(what, rawHost, 'the name does not resolve');
    });
    if (allow.names(host)) return addresses;
    const refused = await refusedOf(addresses);
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

  const guardedFetch = (async (input: Parameters<typeof fetch>[0], given?: RequestInit) => {
    const href = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    let url = await checkUrl(href, 'Outbound request');
    // A Request is read as the init it carries (what `given` names wins).
    const init: RequestInit | undefined =
      typeof input === 'string' || input instanceof URL
        ? given
        : {
            method: input.method,
            headers: input.headers,
            body: input.body,
            signal: input.signal,
            redirect: input.redirect,
            ...given,
          };
    if (init?.redirect === 'manual' || init?.redirect === 'error') return pinnedFetch(url, init);
    let current: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const response = await pinnedFetch(url, current);
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

  /** A connection's refusal by name: fetch gives it back only as text inside 'fetch failed'. */
  const refusals = new Map<string, Error>();
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
        if (options.all) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: Error) => {
        if (isDomainError(error)) refusals.set(hostname, error);
        callback(error as NodeJS.ErrnoException, '', 0);
      },
    );
  };

  /**
   * fetch's own connections (undici's, kept alive between calls), each socket connected through
   * `lookup`: to an address the policy admitted when it looked, never to what the name answers later.
   */
  const dispatcher = new Agent({ connect: { lookup } });

  /** One request as fetch makes it (no redirect followed) through `dispatcher`; a refusal by the policy is the 403 it is. */
  const pinnedFetch = async (url: URL, init: RequestInit): Promise<Response> => {
    try {
      // `dispatcher` and `duplex` are options of Node's fetch (undici's) that the DOM's RequestInit does not name.
      return await fetch(url, { ...init, redirect: 'manual', duplex: 'half', dispatcher } as RequestInit);
    } catch (error) {
      // A refusal at the connection is the 403 it is, not 'fetch failed'.
      const refused = refusals.get(url.hostname);
      refusals.delete(url.hostname);
      throw refused ?? error;
    }
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

  return {
    allowed: allow.entries,
    checkHost,
    checkUrl,
    fetch: guardedFetch,
    lookup,
    get,
    followSignIn: (port) => {
      signInOn = port;
    },
    localFirstNotice: localFirst
      ? `outbound calls, local-first: while sign-in is off, loopback and private destinations (${LOCAL_FIRST_BLOCKS.join(', ')}) are reached as public ones are; once an admin exists, only public addresses and OUTBOUND_ALLOW. Set OUTBOUND_LOCAL_FIRST=false to refuse them now.`
      : 'outbound calls: public addresses and OUTBOUND_ALLOW only, sign-in on or off (OUTBOUND_LOCAL_FIRST=false)',
  };
};
