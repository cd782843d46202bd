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
  return parser;
};
