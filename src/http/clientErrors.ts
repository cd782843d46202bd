import type { Server } from 'node:http';
import type { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';

/**
 * Requests Node's HTTP parser refuses never reach express (headers over 16 KiB, a malformed request
 * line or chunk size, a header with a forbidden character). Node's default answer is a bare status
 * line with no body; clients of this API expect every refusal as problem+json naming what is wrong.
 */
const answerOf = (code: string | undefined): { status: number; title: string; detail: string } => {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        title: 'Request header fields too large',
        detail: 'The request headers exceed the size the server accepts (16 KiB in all)',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        title: 'Payload too large',
        detail: 'The chunk extensions of the request body are too large',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        title: 'Request timeout',
        detail: 'The request did not arrive in full within the time the server allows',
      };
    case 'HPE_INVALID_CHUNK_SIZE':
      return {
        status: 400,
        title: 'Bad request',
        detail: 'The chunked request body has an invalid chunk size',
      };
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return {
        status: 400,
        title: 'Bad request',
        detail: 'The request has an invalid Content-Length or Transfer-Encoding',
      };
    case 'HPE_INVALID_METHOD':
    case 'HPE_INVALID_URL':
    case 'HPE_INVALID_VERSION':
    case 'HPE_INVALID_CONSTANT':
      return { status: 400, title: 'Bad request', detail: 'The request line is not valid HTTP/1.1' };
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_INVALID_CHUNK_EXTENSIONS':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return { status: 400, title: 'Bad request', detail: 'The request is not valid HTTP/1.1 framing' };
    default:
      return { status: 400, title: 'Bad request', detail: 'The request is not valid HTTP' };
  }
};

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/**
 * Node keeps the response in progress on the socket in a private field; read only to not interleave
 * our answer with it (pipelined requests: a good one, then garbage).
 */
type InProgress = EventEmitter & {
  writableFinished?: boolean;
  headersSent?: boolean;
  req?: { complete?: boolean };
};
type ServerSocket = Duplex & { _httpMessage?: InProgress | null };

const installed = new WeakSet<Server>();

/**
 * Answers protocol errors with a problem+json where that is safe: the socket is still writable and
 * no answer is half-written on it. When the error is in the body of the request being answered (a
 * bad chunk), that request is broken: the problem goes out at once if its answer has not started
 * (as Node's own handler does). When the request being answered arrived whole and the error is in
 * the bytes after it (pipelining), its answer goes first and the problem after it. Then the
 * connection is closed: after a framing error the rest of the byte stream cannot be trusted.
 * Nothing the client sent is echoed. Installing twice is harmless.
 */
export const answerClientErrors = (server: Server, logger?: Logger): Server => {
  if (installed.has(server)) return server;
  installed.add(server);
  server.on('clientError', (error: Error, socket: Duplex) => {
    const code = (error as NodeJS.ErrnoException).code;
    // The client went away (or the socket already failed): there is no one left to answer.
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, title, detail } = answerOf(code);
    logger?.info({ code, status }, 'refused a malformed HTTP request');
    const body = JSON.stringify({ title, detail, status });
    const answer = () => {
      if (!socket.writable) return void socket.destroy();
      socket.end(
        `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\n` +
          'Content-Type: application/problem+json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    };
    const inProgress = (socket as ServerSocket)._httpMessage;
    if (!inProgress || inProgress.writableFinished) return answer();
    if (inProgress.req?.complete === false) {
      if (inProgress.headersSent) socket.destroy();
      else answer();
      return;
    }
    inProgress.once('finish', answer);
    // A response that never finishes (its client gone): nothing more to say on this socket.
    inProgress.once('close', () => {
      if (!inProgress.writableFinished) socket.destroy();
    });
  });
  return server;
};
