import cors from 'cors';
import type { Request, RequestHandler } from 'express';
import { MemoryStore, rateLimit } from 'express-rate-limit';
import helmet from 'helmet';
import { isLoopback, type Config } from '../config';
import { forbidden, tooManyRequests, unauthorized } from '../shared/errors';
import { currentRequest, withRequest, type RequestContext } from '../shared/requestContext';
import { cookieOf, SESSION_COOKIE } from './cookies';
import { refusalOf } from './roles';
import type { Identity, UsersService } from './service';

type AuthConfig = Config['auth'];

const identities = new WeakMap<Request, Identity>();
const contexts = new WeakMap<Request, RequestContext>();

/** Who signed this request in (undefined: nobody, or authentication is off). */
export const identityOf = (req: Request) => identities.get(req);

/**
 * Probes: liveness and readiness, asked by load balancers and orchestrators, which carry no
 * credentials and address the process by its pod or container name, not a loopback one. They say
 * only whether the process is up and its read model caught up.
 */
const PROBE = /^\/api\/(util\/ping|health|ready)\/?$/i;
/**
 * Routes anyone reaches: MindsDB's open ones, the probes, the chat webhooks (their token is the key),
 * and the metrics, which Prometheus scrapes without credentials as /api/status is read: counts,
 * durations and log positions by route pattern, never a name, a value or a secret.
 */
const OPEN = [
  /^\/api\/status\/?$/i,
  /^\/api\/login\/?$/i,
  /^\/api\/logout\/?$/i,
  PROBE,
  /^\/api\/metrics\/?$/i,
  /^\/api\/webhooks\/chatbots\/[^/]+\/?$/i,
];
/** Everything outside /api (the console's page and assets, the API document viewer) is public. */
const isOpen = (path: string) => !/^\/api(\/|$)/i.test(path) || OPEN.some((p) => p.test(path));

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const hostName = (host: string | undefined) => {
  if (!host) return '';
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.replace(/:\d+$/, '');
};

const originHost = (value: string) => {
  try {
    return new URL(value).host.toLowerCase();
  } catch {
    return null;
  }
};
const originOf = (value: string) => {
  try {
    return new URL(value).origin.toLowerCase();
  } catch {
    return null;
  }
};

/**
 * CSRF for cookie-signed writes, beyond SameSite=Lax: a browser names where a request comes from
 * (Origin, else Referer); it must be this server (its Host) or an allowed CORS origin. A request
 * naming neither is a non-browser client (browsers send Origin on every cross-origin write) unless
 * Sec-Fetch-Site says a browser sent it from elsewhere.
 */
const crossSiteWrite = (req: Request, allowed: ReadonlySet<string>) => {
  const origin = req.headers.origin ?? req.headers.referer;
  const host = (req.headers.host ?? '').toLowerCase();
  if (origin && origin !== 'null') {
    if (originHost(origin) === host) return false;
    const o = originOf(origin);
    return o === null || !allowed.has(o);
  }
  if (origin === 'null') return true;
  const site = req.headers['sec-fetch-site'];
  return site !== undefined && site !== 'same-origin' && site !== 'none';
};

const bearerOf = (req: Request) => {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : '';
};

/**
 * The door, in front of every route: security headers, CORS (allow-list, off by default), then
 * with authentication off only loopback Host names (DNS rebinding); with it on, a session cookie
 * or a bearer token on every route but the open ones, the caller's role checked against the route,
 * and an Origin check on cookie-signed writes. The request context then names the actor.
 */
export const guard = (users: UsersService, config: AuthConfig): RequestHandler[] => {
  const allowedOrigins = new Set(config.corsOrigins.map((o) => o.toLowerCase()));
  const allowedHosts = new Set(config.allowedHosts);
  const handlers: RequestHandler[] = [
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          // CodeMirror and Observable Plot set styles from script; swagger UI has inline styles.
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:', 'blob:'],
          fontSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          workerSrc: ["'self'", 'blob:'],
          objectSrc: ["'none'"],
          baseUri: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
        },
      },
      // Plain HTTP on loopback is the default start: HSTS would only matter behind TLS (a proxy sets it).
      strictTransportSecurity: false,
    }),
  ];
  if (allowedOrigins.size > 0)
    handlers.push(
      cors({
        origin: [...allowedOrigins],
        credentials: true,
        methods: ['GET', 'POST', 'PUT', 'DELETE'],
        allowedHeaders: ['Content-Type', 'Authorization', 'If-Match', 'X-Request-Id', 'X-Min-Log-Position'],
        exposedHeaders: ['ETag', 'X-Request-Id', 'Retry-After', 'X-Log-Position'],
        maxAge: 600,
      }),
    );
  // Without a proxy to trust, the client's address is the socket's (what req.ip answers then, after
  // parsing X-Forwarded-For for nothing).
  const addressOf = (req: Request) =>
    (config.trustProxy === undefined ? req.socket.remoteAddress : req.ip) ?? req.socket.remoteAddress ?? '';
  const viaOf = (req: Request, base: RequestContext) =>
    /^\/api\/sql\/query\/?$/i.test(req.path) ? ('sql' as const) : base.interface;
  /** The context the access log opened (a request's id and door) that the guard adds the actor to. */
  const openedContext = (): RequestContext => currentRequest() ?? { requestId: '', interface: 'rest' };
  const proceed = (req: Request, next: () => void, context: RequestContext) => {
    contexts.set(req, context);
    withRequest(context, next);
  };
  /** Authentication off: only the Host check, then the client's address as the actor. */
  const open = (req: Request, next: () => void) => {
    const base = openedContext();
    const host = hostName(req.headers.host);
    // Probes answer nothing worth rebinding for, and address the pod, not localhost. The metrics
    // are held to the Host check like /api/status: list the name Prometheus scrapes in ALLOWED_HOSTS.
    if (!PROBE.test(req.path) && !isLoopback(host) && !allowedHosts.has(host))
      throw forbidden(
        `Authentication is off, so this server answers only requests addressed to a loopback name (127.0.0.1, localhost, [::1]), not ${host || '(no Host)'}: a web page elsewhere could otherwise reach it through DNS rebinding. Turn authentication on (AUTH_USERNAME and AUTH_PASSWORD), or list this host name in ALLOWED_HOSTS.`,
        'Host not allowed',
      );
    proceed(req, next, {
      ...base,
      interface: viaOf(req, base),
      actor: { kind: 'address', id: addressOf(req) },
    });
  };
  const signedIn = async (req: Request, next: () => void) => {
    if (!(await users.enabled())) return open(req, next);
    const base = openedContext();
    const via = viaOf(req, base);
    const address = addressOf(req);
    const bearer = bearerOf(req);
    const cookie = bearer === undefined ? cookieOf(req, SESSION_COOKIE) : undefined;
    const identity =
      bearer !== undefined
        ? await users.fromToken(bearer)
        : cookie !== undefined
          ? await users.fromSession(cookie)
          : undefined;
    if (bearer !== undefined && !identity && !/^\/api\/(login|logout)\/?$/i.test(req.path))
      throw unauthorized('The bearer token is unknown, expired or revoked');
    if (UNSAFE.has(req.method) && bearer === undefined && crossSiteWrite(req, allowedOrigins))
      throw forbidden(
        'This write comes from another site (its Origin or Referer is neither this server nor an allowed CORS origin)',
        'Cross-site request refused',
      );
    if (!identity) {
      if (isOpen(req.path))
        return proceed(req, next, { ...base, interface: via, actor: { kind: 'address', id: address } });
      throw unauthorized('Authorization is required to complete the request');
    }
    identities.set(req, identity);
    if (!isOpen(req.path)) {
      const refusal = refusalOf(identity.principal, req.method, req.path);
      if (refusal) throw forbidden(refusal);
    }
    return proceed(req, next, {
      ...base,
      interface: via,
      actor: identity.actor,
      principal: identity.principal,
    });
  };
  // Synchronous when the users' state is loaded and says authentication is off (a local start's
  // every request): no promise to settle.
  handlers.push((req, _res, next) => (users.enabledNow() === false ? open(req, next) : signedIn(req, next)));
  return handlers;
};

/**
 * After the JSON body parser: the body's stream events ran outside the request's async context,
 * so the context the guard made is entered again for the route.
 */
export const reenterRequest: RequestHandler = (req, _res, next) => {
  const context = contexts.get(req);
  // A request without a body was never left (its parser called on at once).
  if (context && currentRequest() !== context) withRequest(context, next);
  else next();
};

/**
 * Failed sign-ins, per address and per user name: LOGIN_RATE_LIMIT in each window, successes
 * not counted. A blocked attempt answers 429 with Retry-After, before its password is checked.
 * `close` stops the stores' window timers: left running, each kept the app that made it reachable
 * (a timer holds the async context it was made in) for the window's length, 15 minutes by default.
 */
export const loginLimiters = (config: AuthConfig): { handlers: RequestHandler[]; close: () => void } => {
  const byAddress = new MemoryStore();
  const byUser = new MemoryStore();
  const common = {
    windowMs: config.loginRateWindowMs,
    limit: config.loginRateLimit,
    standardHeaders: 'draft-8' as const,
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    handler: ((_req, _res, next) =>
      next(
        tooManyRequests(
          'Too many failed sign-ins: wait before trying again',
          Math.ceil(config.loginRateWindowMs / 1000),
          'Too many login attempts',
        ),
      )) as RequestHandler,
  };
  const handlers = [
    rateLimit({ ...common, store: byAddress, validate: { trustProxy: false, xForwardedForHeader: false } }),
    rateLimit({
      ...common,
      store: byUser,
      keyGenerator: (req) => {
        const name = (req.body as { username?: unknown } | undefined)?.username;
        return `user:${typeof name === 'string' ? name.toLowerCase() : ''}`;
      },
      validate: { trustProxy: false, xForwardedForHeader: false, keyGeneratorIpFallback: false },
    }),
  ];
  return {
    handlers,
    close: () => {
      byAddress.shutdown();
      byUser.shutdown();
    },
  };
};
