import type { DatabaseCreated } from '../../events';
import { decideDatabase, type DatabaseCommand } from '../../src/databases/decider';
import { evolveDatabase, initialDatabaseState, type DatabaseState } from '../../src/databases/state';
import { deciderSpec } from '../support/decider';

const now = new Date('2026-02-03T04:05:06.789Z');
const at = now.toISOString();
const spec = deciderSpec<DatabaseState, DatabaseCommand>({
  initialState: initialDatabaseState,
  evolve: evolveDatabase,
  decide: decideDatabase,
});
const params = { host: 'h', user: 'u', password: 's3cret', database: 'd' };
const created: DatabaseCreated = {
  type: 'DatabaseCreated',
  data: { name: 'pg1', engine: 'postgres', parameters: params, createdAt: at },
};

describe('database decider', () => {
  it('registers a database', () =>
    spec
      .given([])
      .when({
        type: 'CreateDatabase',
        data: { name: 'pg1', engine: 'postgres', parameters: params },
        metadata: { now },
      })
      .then([created]));

  it('refuses a duplicate name', () =>
    spec
      .given([created])
      .when({
        type: 'CreateDatabase',
        data: { name: 'PG1', engine: 'postgres', parameters: params },
        metadata: { now },
      })
      .thenThrows('Conflict', /already exists/));

  it('keeps a stored secret when the update sends the mask back', () =>
    spec
      .given([created])
      .when({
        type: 'UpdateDatabase',
        data: { name: 'pg1', parameters: { ...params, password: '******', host: 'h2' } },
        metadata: { now },
      })
      .then([
        {
          type: 'DatabaseUpdated',
          data: {
            databaseId: 1,
            name: 'pg1',
            engine: 'postgres',
            parameters: { ...params, host: 'h2' },
            updatedAt: at,
          },
        },
      ]));

  it('replaces a secret when a new value is sent', () =>
    spec
      .given([created])
      .when({
        type: 'UpdateDatabase',
        data: { name: 'pg1', parameters: { ...params, password: 'new' } },
        metadata: { now },
      })
      .then([
        {
          type: 'DatabaseUpdated',
          data: {
            databaseId: 1,
            name: 'pg1',
            engine: 'postgres',
            parameters: { ...params, password: 'new' },
            updatedAt: at,
          },
        },
      ]));

  it('deletes, and then knows it no more', () => {
    spec
      .given([created])
      .when({ type: 'DeleteDatabase', data: { name: 'pg1' }, metadata: { now } })
      .then([{ type: 'DatabaseDeleted', data: { databaseId: 1, name: 'pg1', deletedAt: at } }]);
    spec
      .given([created, { type: 'DatabaseDeleted', data: { databaseId: 1, name: 'pg1', deletedAt: at } }])
      .when({ type: 'DeleteDatabase', data: { name: 'pg1' }, metadata: { now } })
      .thenThrows('NotFound');
  });

  it('checks If-Match versions', () =>
    spec
      .given([created])
      .when({ type: 'DeleteDatabase', data: { name: 'pg1', expectedVersion: 2n }, metadata: { now } })
      .thenThrows('PreconditionFailed'));
});
