import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { BatchRowStore, createTableSql } from '../../src/projection/rows';
import { keyedTable } from '../support/projection';

// A batch's rows are written at its end: the keys it touched are deleted, then its rows appended.
// Inserted rows (fresh keys) skip the delete; these specs pin what that may and may not change.
const things = keyedTable('things', [
  { name: 'ID', type: 'BIGINT' },
  { name: 'NAME', type: 'VARCHAR' },
]);

describe('a batch of row changes', () => {
  let connection: DuckDBConnection;
  beforeEach(async () => {
    connection = await (await DuckDBInstance.create(':memory:')).connect();
    await connection.run(createTableSql(things));
    await connection.run(`INSERT INTO things VALUES (1, 'stored')`);
  });
  afterEach(() => connection.closeSync());

  const rows = async () =>
    (await connection.runAndReadAll('SELECT ID, NAME FROM things ORDER BY ID')).getRowObjectsJS();
  const batch = async (change: (store: BatchRowStore) => void) => {
    const store = new BatchRowStore(things, connection);
    change(store);
    await store.flush();
  };

  it('given a stored row, when a batch puts then inserts its key, then the table holds one row for it', async () => {
    await batch((s) => {
      s.put({ ID: 1n, NAME: 'changed' });
      s.insert({ ID: 1n, NAME: 'again' });
    });
    expect(await rows()).toEqual([{ ID: 1n, NAME: 'again' }]);
  });

  it('when a batch inserts a fresh key and deletes it, then nothing of it is written', async () => {
    await batch((s) => {
      s.insert({ ID: 2n, NAME: 'brief' });
      s.delete(2n);
    });
    expect(await rows()).toEqual([{ ID: 1n, NAME: 'stored' }]);
  });

  it('when a batch inserts a fresh key and then changes it, then the last version is the one row', async () => {
    await batch((s) => {
      s.insert({ ID: 3n, NAME: 'first' });
      s.put({ ID: 3n, NAME: 'second' });
      s.put({ ID: 1n, NAME: 'changed' });
    });
    expect(await rows()).toEqual([
      { ID: 1n, NAME: 'changed' },
      { ID: 3n, NAME: 'second' },
    ]);
  });

  it('when a batch deletes a stored key and inserts a new one, then the stored one is gone', async () => {
    await batch((s) => {
      s.delete(1n);
      s.insert({ ID: 4n, NAME: 'new' });
    });
    expect(await rows()).toEqual([{ ID: 4n, NAME: 'new' }]);
  });
});
