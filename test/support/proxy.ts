import net from 'node:net';

/**
 * A TCP proxy in front of a real database, for tests: it counts the bytes the database sends back
 * (to tell a pushed-down query from a copied table) and which connections the service closed, and can
 * be cut and restored (a database that goes down and comes back).
 */
export const startProxy = async (targetPort: number) => {
  const sockets = new Set<net.Socket>();
  let bytesFromServer = 0;
  /** Each connection: the text its client sent (its first MiB) and whether the client closed it. */
  const connections: { sent: string; closedByClient: boolean }[] = [];
  let server: net.Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        sockets.add(client).add(upstream);
        upstream.on('data', (chunk: Buffer) => (bytesFromServer += chunk.length));
        client.pipe(upstream).pipe(client);
        const connection = { sent: '', closedByClient: false };
        connections.push(connection);
        client.on('data', (chunk: Buffer) => {
          if (connection.sent.length < 2 ** 20) connection.sent += chunk.toString('latin1');
        });
        // A client that closes ends its side (FIN) or resets it (an error here), unread data pending.
        const closedByClient = () => (connection.closedByClient = true);
        client.once('end', closedByClient).once('error', closedByClient);
        const end = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', end).on('close', end);
        upstream.on('error', end).on('close', end);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    resetCount: () => (bytesFromServer = 0),
    get bytes() {
      return bytesFromServer;
    },
    /** Whether the client (the service) closed a connection on which it had sent `text` (a query's marker). */
    closedByClientAfterSending: (text: string) =>
      connections.some((c) => c.closedByClient && c.sent.includes(text)),
    /** Refuses new connections and cuts the open ones. */
    down: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        sockets.clear();
        server.close(() => resolve());
      }),
    up: listen,
  };
};
