import { parseHostAllowList } from '../../src/integrations/hostPolicy';
import { loadConfig } from '../../src/config';

const admitted = async (list: string, host: string) =>
  parseHostAllowList(list)
    .check(host)
    .then(
      () => true,
      () => false,
    );

describe('DB_HOST_ALLOWLIST', () => {
  it('admits every host when unset', async () => {
    expect(parseHostAllowList(undefined).restricted).toBe(false);
    expect(await admitted('', '203.0.113.9')).toBe(true);
  });

  it.each([
    ['10.0.0.0/8', '10.200.3.4', true],
    ['10.0.0.0/8', '11.0.0.1', false],
    ['192.168.1.7', '192.168.1.7', true],
    ['192.168.1.7', '192.168.1.8', false],
    ['fd00::/8', 'fd12::1', true],
    ['fd00::/8', '[fd12::1]', true],
    ['fd00::/8', 'fe80::1', false],
    ['*.db.internal', 'orders.db.internal', true],
    ['*.db.internal', 'db.internal.evil.com', false],
    ['Warehouse.Example', 'warehouse.example', true],
    ['warehouse.example', 'other.example', false],
    ['127.0.0.0/8', 'localhost', true],
  ])('%s admits %s: %s', async (list, host, expected) => {
    expect(await admitted(list, host)).toBe(expected);
  });

  it('refuses entries that are neither names, addresses nor blocks at start', () => {
    expect(() => parseHostAllowList('10.0.0.0/40')).toThrow(/not a CIDR block/);
    expect(() => parseHostAllowList('bad host!')).toThrow(/neither a host name/);
  });
});

/**
 * DNS rebinding: a name checked once and resolved again by the driver could answer a public
 * address to the check and a private one to the connection. The policies hand the driver the
 * address they checked, so the name is resolved once.
 */
describe('the host a database driver is given', () => {
  const isAddress = (host: string) => /^(\d{1,3}\.){3}\d{1,3}$|^[0-9a-f:]+$/i.test(host);

  it('given DB_HOST_ALLOWLIST with address entries, then a name is given as the address it was checked as', async () => {
    const to = await parseHostAllowList('127.0.0.0/8,::1').check('localhost');
    expect(isAddress(to)).toBe(true);
    expect(['127.0.0.1', '::1']).toContain(to);
  });

  it('given a name the list admits by name, then it is given as it is (the operator trusts that name)', async () => {
    expect(await parseHostAllowList('localhost').check('localhost')).toBe('localhost');
  });

  it('given no DB_HOST_ALLOWLIST, then the outbound policy checks it and the checked address is given', async () => {
    const config = loadConfig({ OUTBOUND_ALLOW: '127.0.0.0/8,::1' });
    const to = await config.dbHosts.check('localhost');
    expect(['127.0.0.1', '::1']).toContain(to);
    // Numeric host forms are given as the address they stand for.
    expect(await config.dbHosts.check('2130706433')).toBe('127.0.0.1');
    expect(await config.dbHosts.check('127.1')).toBe('127.0.0.1');
  });
});
