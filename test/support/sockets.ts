/**
 * Idle TCP sockets a flood opens against a wire door (test/mysql and test/pgwire preauth-flood specs):
 * nothing sent, the server's greeting read and dropped.
 */
import net from 'node:net';

/** Idle TCP connections (nothing sent) from `localAddress`, each open once connected. */
export const idleSockets = async (port: number, count: number, localAddress: string) => {
  const sockets = Array.from({ length: count }, () => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress });
    s.on('error', () => undefined);
    // What the server sends (a greeting) is read and dropped: the client itself sends nothing.
    s.resume();
    return s;
  });
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.once('connect', () => resolve());
          s.once('close', () => resolve());
        }),
    ),
  );
  return sockets;
};

/** The sockets the server has not dropped. */
export const openSockets = (sockets: net.Socket[]) =>
  sockets.filter((s) => !s.destroyed && s.readyState === 'open');
