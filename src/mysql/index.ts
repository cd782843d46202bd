export { startMysqlServer, type MysqlServer, type MysqlServerOptions } from './server';
export type {
  Authenticator,
  ClientOf,
  ErrorAnswer,
  ServerLogger,
  SqlAnswer,
  SqlContext,
  SqlEngine,
  StreamAnswer,
  TableStream,
} from './port';
