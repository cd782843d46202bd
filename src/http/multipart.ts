import busboy from 'busboy';
import type { Request } from 'express';
import { invalid, messageOf } from '../shared/errors';

/**
 * A multipart parser over `request`'s body, or undefined when its headers cannot start one; either
 * way a malformed body (now or while parsing) is told to `reject` as a 400 naming why.
 */
export const multipartParser = (
  request: Request,
  limits: busboy.Limits,
  reject: (error: unknown) => void,
): busboy.Busboy | undefined => {
  const malformed = (error: unknown) => reject(invalid(`Malformed multipart body: ${messageOf(error)}`));
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: request.headers, limits });
  } catch (error) {
    malformed(error);
    return undefined;
  }
  parser.on('error', malformed);
  // A body that ends inside a part destroys that part's stream with the parser's error (told to
  // `reject` above). A part the route skips (`stream.resume()`) had no listener for it, and an
  // 'error' nobody listens to ended the process; a part the route reads listens on its own.
  parser.on('file', (_field, stream) => stream.on('error', () => undefined));
  return parser;
};
