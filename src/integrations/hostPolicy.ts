import dns from 'node:dns/promises';
import net from 'node:net';
import { parseAllowList } from '../http/outbound';
import { forbidden } from '../shared/errors';

/**
 * Which hosts external databases may live on (DB_HOST_ALLOWLIST). Without a list every host is
 * allowed and a refused connection is reported without the driver's reason, so that registering a
 * database cannot map the internal network (closed port, open port, "that is a MySQL server" all
 * read the same). With a list, only its hosts can be reached at all, and the reason is shown.
 *
 * Entries, comma-separated: a host name (`db.internal`), a wildcard suffix (`*.internal`), an IP
 * address or a CIDR block (`10.0.0.0/8`, `fd00::/8`). A host name matches a name entry as written,
 * or an address entry when every address it resolves to is inside one.
 */
export type HostPolicy = {
  readonly restricted: boolean;
  /** Throws 403 naming the host unless the list admits it; resolves DNS only when needed. */
  check(host: string): Promise<void>;
};

export const parseHostAllowList = (text: string | undefined): HostPolicy => {
  // The grammar is OUTBOUND_ALLOW's (src/http/outbound.ts): one parser for both lists.
  const list = parseAllowList(text, 'DB_HOST_ALLOWLIST');
  if (list.entries.length === 0) return { restricted: false, check: async () => undefined };
  const admits = async (host: string) => {
    const name = host
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, '');
    if (net.isIP(name)) return list.addresses(name);
    if (list.names(name)) return true;
    const resolved = await dns.lookup(name, { all: true }).catch(() => []);
    return resolved.length > 0 && resolved.every((r) => list.addresses(r.address));
  };
  return {
    restricted: true,
    check: async (host) => {
      if (!(await admits(host)))
        throw forbidden(
          `Host '${host}' is not in this server's allow-list of database hosts (DB_HOST_ALLOWLIST)`,
          'Host not allowed',
        );
    },
  };
};
