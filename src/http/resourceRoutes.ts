import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import { ifMatchVersion, problem, type HttpResult, type RouteResponses } from './api';

/*
 * What the routes of every resource say alike: a read answers 200 or a 404 naming what is missing;
 * a create answers 201 with what it made, a PUT 200 or 201 with the resource, each with the problems
 * it names; a delete answers 204, or 404, or 412 when it takes If-Match, and most run the slice's
 * delete command the same way. Spelled once, so every slice documents and handles them alike.
 */

/** A read's answers: 200 with `schema`, or a 404 problem saying what is missing. */
export const readResponses = (description: string, schema: z.ZodType, missing: string) => ({
  200: { description, schema },
  404: problem(missing),
});

/** The problems a route answers, each by its status and what it says: `{ 404: 'Unknown project' }`. */
export type Problems = Readonly<Record<number, string>>;

const problemResponses = (problems: Problems): RouteResponses =>
  Object.fromEntries(Object.entries(problems).map(([status, description]) => [status, problem(description)]));

/** A create's answers: 201 with what it made (`schema`), or one of its `problems`. */
export const createResponses = (
  schema: z.ZodType,
  problems: Problems,
  created = 'Created',
): RouteResponses => ({
  201: { description: created, schema },
  ...problemResponses(problems),
});

/**
 * A PUT's answers: 200 when it changed the resource (`changed` says how), 201 when it made it under
 * the URL's name, both with `schema`; or one of its `problems`.
 */
export const putResponses = (schema: z.ZodType, problems: Problems, changed = 'Updated'): RouteResponses => ({
  200: { description: changed, schema },
  201: { description: 'Created', schema },
  ...problemResponses(problems),
});

/** A delete's answers: 204, a 404 problem saying what is missing, and a 412 when it takes If-Match. */
export const deleteResponses = (missing: string, staleIfMatch?: string) => {
  const responses: RouteResponses = { 204: { description: 'Deleted' }, 404: problem(missing) };
  if (staleIfMatch !== undefined) responses[412] = problem(staleIfMatch);
  return responses;
};

/** The resource a delete command deletes (as the path names it), at the version If-Match names. */
type DeleteTarget = { ref: string; expectedVersion: bigint | undefined };
/** What a delete's handler reads of its request: the path, If-Match and ?forget. */
type DeleteRequest<K extends string> = {
  params: { project: string } & Record<K, string>;
  headers: IncomingHttpHeaders;
  query: { forget: boolean };
};

/**
 * The handler of `DELETE …/:<key>?forget=` run as the slice's delete command: the path's `<key>`
 * names the resource, If-Match its version (stale: 412), ?forget=true also forgets its secrets; 204.
 */
export const deleteByCommand =
  <K extends string>(
    key: K,
    run: (project: string, target: DeleteTarget, options: { forget: boolean }) => Promise<unknown>,
  ) =>
  async ({ params, headers, query }: DeleteRequest<K>): Promise<HttpResult> => {
    const target = { ref: params[key], expectedVersion: ifMatchVersion(headers) };
    await run(params.project, target, { forget: query.forget });
    return { status: 204 };
  };
