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
 *
 * A name is resolved once, here: the driver is given the address that was checked, so a name that
 * resolves elsewhere a moment later (DNS rebinding) cannot take the connection past the check. A
 * name the list admits by name is given to the driver as it is (the operator trusts that name).
 */
export type HostPolicy = {
  readonly restricted: boolean;
  /** Throws 403 naming the host unless the list admits it; the host the driver connects to. */
  check(host: string): Promise<string>;
};

export const parseHostAllowList = (text: string | undefined): HostPolicy => {
  // The grammar is OUTBOUND_ALLOW's (src/http/outbound.ts): one parser for both lists.
  const list = parseAllowList(text, 'DB_HOST_ALLOWLIST');
  if (list.entries.length === 0) return { restricted: false, check: async (host) => host };
  /** The host to connect to when the list admits `host`, else null. */
  const admitted = async (host: string): Promise<string | null> => {
    const name = host
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, '');
    if (net.isIP(name)) return list.addresses(name) ? name : null;
    if (list.names(name)) return host;
    const resolved = await dns.lookup(name, { all: true }).catch(() => []);
    return resolved.length > 0 && resolved.every((r) => list.addresses(r.address))
      ? resolved[0]!.address
      : null;
  };
  return {
    restricted: true,
    check: async (host) => {
      const to = await admitted(host);
      if (to === null)
        throw forbidden(
          `Host '${host}' is not in this server's allow-list of database hosts (DB_HOST_ALLOWLIST)`,
          'Host not allowed',
        );
      return to;
    },
  };
};
