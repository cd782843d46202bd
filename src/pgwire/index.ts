export { startPgServer, type PgServer, type PgServerOptions } from './server';
