import { projected } from '../support/projection';

const at = '2026-03-04T05:06:07.089Z';

describe('databases table', () => {
  it('holds live integrations with their secrets masked', async () => {
    const table = await projected([
      {
        type: 'DatabaseCreated',
        data: {
          name: 'pg',
          engine: 'postgres',
          parameters: { host: 'h', password: 'pw', url: 'postgres://u:pw@h/db' },
          createdAt: at,
        },
      },
      {
        type: 'DatabaseUpdated',
        data: {
          databaseId: 1,
          name: 'pg',
          engine: 'postgres',
          parameters: { host: 'h2', password: 'pw2' },
          updatedAt: at,
        },
      },
      { type: 'DatabaseCreated', data: { name: 'gone', engine: 'mysql', parameters: {}, createdAt: at } },
      { type: 'DatabaseDeleted', data: { databaseId: 3, name: 'gone', deletedAt: at } },
    ]);
    expect(table('databases')).toEqual([
      expect.objectContaining({
        id: 1n,
        name: 'pg',
        engine: 'postgres',
        connection_data: { host: 'h2', password: '******' },
        version: 2n,
      }),
    ]);
  });
});
