import type net from 'node:net';
import { Duplex } from 'node:stream';

/**
 * A stream that yields `first`, then whatever `socket` sends: a TLS layer over bytes already read
 * (a client may send its TLS hello in the same packet as the request to switch to TLS).
 */
export const prepended = (socket: net.Socket, first: Buffer): Duplex => {
  const stream = new Duplex({
    read: () => socket.resume(),
    write: (chunk: Buffer, _encoding, callback) => socket.write(chunk, callback),
    final: (callback) => socket.end(callback),
    destroy: (error, callback) => {
      socket.destroy();
      callback(error);
    },
  });
  stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('close', () => stream.destroy());
  socket.on('error', () => undefined);
  return stream;
};
