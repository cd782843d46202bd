import type { Config } from './settings';

export const isLoopback = (host: string) => {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
};

/**
 * Why this configuration must not start, or null. With no authentication, anyone who reaches the
 * port can read and delete everything: serving on an address other hosts can reach needs the
 * operator's explicit ALLOW_UNAUTHENTICATED=1 (the Docker image binds 0.0.0.0).
 */
export const unsafeBinding = (config: Config): string | null =>
  isLoopback(config.host) || config.allowUnauthenticated || config.auth.bootstrap !== undefined
    ? null
    : `Refusing to listen on ${config.host}: authentication is off, so anyone who can reach this address could read, change and delete every project. Listen on 127.0.0.1 (HOST), or set ALLOW_UNAUTHENTICATED=1 to serve without authentication anyway (behind a trusted network or proxy).`;
