export { startMysqlServer, type MysqlServer, type MysqlServerOptions } from './server';
export { mysqlDialect } from './dialect';
// The engine port and credentials the server takes (src/doorway), named here for its callers.
export type { Authenticator } from '../doorway/credentials';
export type { SqlEngine, StreamAnswer } from '../doorway/engine';
