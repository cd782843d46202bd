import dns from 'node:dns/promises';
import net from 'node:net';
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
  const entries = (text ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (entries.length === 0) return { restricted: false, check: async () => undefined };
  const blocks = new net.BlockList();
  const names: string[] = [];
  const suffixes: string[] = [];
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const family = net.isIP(address!);
    if (family !== 0) {
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (bits === undefined) blocks.addAddress(address!, type);
      else {
        const prefix = Number(bits);
        const max = family === 4 ? 32 : 128;
        if (!Number.isInteger(prefix) || prefix < 0 || prefix > max)
          throw new Error(`DB_HOST_ALLOWLIST: '${entry}' is not a CIDR block`);
        blocks.addSubnet(address!, prefix, type);
      }
    } else if (entry.startsWith('*.')) suffixes.push(entry.slice(1));
    else if (/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(entry)) names.push(entry);
    else throw new Error(`DB_HOST_ALLOWLIST: '${entry}' is neither a host name, an address nor a CIDR block`);
  }
  const inBlocks = (address: string) => {
    const family = net.isIP(address);
    return family !== 0 && blocks.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
  const admits = async (host: string) => {
    const name = host
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, '');
    if (net.isIP(name)) return inBlocks(name);
    if (names.includes(name) || suffixes.some((s) => name.endsWith(s))) return true;
    const resolved = await dns.lookup(name, { all: true }).catch(() => []);
    return resolved.length > 0 && resolved.every((r) => inBlocks(r.address));
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
