import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import MindsDB from 'mindsdb-js-sdk';
import type { TestApp } from './app';

export type Sdk = typeof MindsDB;

/**
 * The official `mindsdb-js-sdk`, connected to a test app listening on a free local port, as a user
 * would connect it to a local MindsDB (no sign-in: the SDK skips it for 127.0.0.1).
 *
 * The SDK is one object per process (its modules share one HTTP client), so a spec file connects it
 * to one app at a time; `connectSdk` repoints it, and `close` stops the listener.
 */
export const connectSdk = async (app: TestApp): Promise<{ sdk: Sdk; close: () => Promise<void> }> => {
  const server: Server = await new Promise((resolve) => {
    const s = app.running.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  await MindsDB.connect({ host: `http://127.0.0.1:${port}`, user: '', password: '' });
  return {
    sdk: MindsDB,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
