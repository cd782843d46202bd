import type { z } from 'zod';
import { problem, type RouteResponses } from './api';

/*
 * The answers every resource's routes document alike: a read answers 200 or a 404 naming what is
 * missing; a delete answers 204, or 404, or 412 when it takes If-Match. Spelled once, so the
 * OpenAPI document says them the same way for every slice.
 */

/** A read's answers: 200 with `schema`, or a 404 problem saying what is missing. */
export const readResponses = (description: string, schema: z.ZodType, missing: string) => ({
  200: { description, schema },
  404: problem(missing),
});

/** A delete's answers: 204, a 404 problem saying what is missing, and a 412 when it takes If-Match. */
export const deleteResponses = (missing: string, staleIfMatch?: string) => {
  const responses: RouteResponses = { 204: { description: 'Deleted' }, 404: problem(missing) };
  if (staleIfMatch !== undefined) responses[412] = problem(staleIfMatch);
  return responses;
};
