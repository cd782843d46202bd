import { parseHostAllowList } from '../../src/integrations/hostPolicy';

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
