import type { DatabaseCreated, DatabaseDeleted, DatabaseUpdated } from '../../events';
import { checkExpectedVersion, conflict, notFound, preconditionFailed } from '../shared/errors';
import { keepMaskedSecrets } from '../shared/secrets';
import { decideByType, type Now } from '../shared/decision';
import type { DatabaseState } from './state';

export type DatabaseCommand =
  | {
      type: 'CreateDatabase';
      data: { name: string; engine: string; parameters: Record<string, unknown> };
      metadata: Now;
    }
  | {
      type: 'UpdateDatabase';
      data: { name: string; engine?: string; parameters: Record<string, unknown>; expectedVersion?: bigint };
      metadata: Now;
    }
  | {
      /** PUT: creates the database when it does not exist, updates it when it does. */
      type: 'PutDatabase';
      data: { name: string; engine: string; parameters: Record<string, unknown>; expectedVersion?: bigint };
      metadata: Now;
    }
  | { type: 'DeleteDatabase'; data: { name: string; expectedVersion?: bigint }; metadata: Now };

const checkVersion = (resource: { name: string; version: bigint }, expected: bigint | undefined) =>
  checkExpectedVersion('Database', resource, expected);

type Command<T extends DatabaseCommand['type']> = Extract<DatabaseCommand, { type: T }>;

const createDatabase = (command: Command<'CreateDatabase'>, state: DatabaseState): DatabaseCreated[] => {
  const at = command.metadata.now.toISOString();
  if (state.status === 'live')
    throw conflict(`Database with name ${state.name} already exists.`, 'Name conflict');
  return [{ type: 'DatabaseCreated', data: { ...command.data, createdAt: at } }];
};

const updateDatabase = (command: Command<'UpdateDatabase'>, state: DatabaseState): DatabaseUpdated[] => {
  const at = command.metadata.now.toISOString();
  if (state.status !== 'live')
    throw notFound(`Database with name ${command.data.name} does not exist.`, 'Database not found');
  checkVersion(state, command.data.expectedVersion);
  // Parameters are replaced as a whole; a secret echoed back as "******" keeps its stored value.
  const parameters = keepMaskedSecrets(command.data.parameters, state.parameters);
  return [
    {
      type: 'DatabaseUpdated',
      data: {
        databaseId: Number(state.id),
        name: state.name,
        engine: command.data.engine ?? state.engine,
        parameters,
        updatedAt: at,
      },
    },
  ];
};

const putDatabase = (
  command: Command<'PutDatabase'>,
  state: DatabaseState,
): (DatabaseCreated | DatabaseUpdated)[] => {
  const at = command.metadata.now.toISOString();
  // Concurrent PUTs of a new name: the first creates, the others update what it created.
  if (state.status !== 'live') {
    if (command.data.expectedVersion !== undefined)
      throw preconditionFailed(`Database ${command.data.name} does not exist, so it has no version`);
    const { expectedVersion: _v, ...data } = command.data;
    return [{ type: 'DatabaseCreated', data: { ...data, createdAt: at } }];
  }
  return updateDatabase({ ...command, type: 'UpdateDatabase' }, state);
};

const deleteDatabase = (command: Command<'DeleteDatabase'>, state: DatabaseState): DatabaseDeleted[] => {
  const at = command.metadata.now.toISOString();
  if (state.status !== 'live')
    throw notFound(`Database with name ${command.data.name} does not exist.`, 'Database not found');
  checkVersion(state, command.data.expectedVersion);
  return [
    { type: 'DatabaseDeleted', data: { databaseId: Number(state.id), name: state.name, deletedAt: at } },
  ];
};

export const decideDatabase = decideByType<
  DatabaseCommand,
  DatabaseState,
  DatabaseCreated | DatabaseUpdated | DatabaseDeleted
>({
  CreateDatabase: createDatabase,
  PutDatabase: putDatabase,
  UpdateDatabase: updateDatabase,
  DeleteDatabase: deleteDatabase,
});
