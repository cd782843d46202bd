import net from 'node:net';

/**
 * A TCP proxy in front of a real database, for tests: it counts the bytes the database sends back
 * (to tell a pushed-down query from a copied table) and the connections the service closed, and can
 * be cut and restored (a database that goes down and comes back).
 */
export const startProxy = async (targetPort: number) => {
  const sockets = new Set<net.Socket>();
  let bytesFromServer = 0;
  let closedByClients = 0;
  let server: net.Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        sockets.add(client).add(upstream);
        upstream.on('data', (chunk: Buffer) => (bytesFromServer += chunk.length));
        client.pipe(upstream).pipe(client);
        // A client that closes ends its side (FIN) or resets it (an error here), unread data pending.
        let gone = false;
        const closedByClient = () => {
          if (!gone) closedByClients++;
          gone = true;
        };
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
    /** Connections their client (the service) closed, ending or destroying its side. */
    get closedByClients() {
      return closedByClients;
    },
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
