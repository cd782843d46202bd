import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { unavailable } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import type { Readiness } from './readiness';

/** What the operator's routes read; the composition root fills it. */
export type OperationsPorts = {
  /** Asked on every GET /api/ready (a load balancer's probe): cheap, and bounded in time. */
  readiness(): Promise<Readiness>;
  /** This process's metrics in Prometheus's text format. */
  metrics(): Promise<{ contentType: string; text: string }>;
};

/** Probes and scrapes must see this moment's answer, never a proxy's copy. */
const NO_STORE = { 'Cache-Control': 'no-store' };

const notReadyDetail = (readiness: Extract<Readiness, { ready: false }>) => {
  const requestId = currentRequest()?.requestId;
  const where =
    readiness.logError !== undefined
      ? ` (the server log has the reason${requestId ? `, request id ${requestId}` : ''})`
      : '';
  return `This process should not take traffic yet: ${readiness.reasons.join('; ')}${where}.`;
};

/**
 * Liveness, readiness and metrics, for load balancers, orchestrators and Prometheus. They answer
 * without credentials, like /api/status (src/users/guard.ts: what they show is no more than it does).
 */
export const operationsRoutes = (api: Api, ports: OperationsPorts) =>
  api
    .add({
      method: 'get',
      path: '/api/health',
      tag: 'operations',
      summary: 'Liveness: 200 as long as the process serves requests',
      responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
      handle: async () => ({ status: 200, headers: NO_STORE, body: { status: 'ok' } }),
    })
    .add({
      method: 'get',
      path: '/api/ready',
      tag: 'operations',
      summary:
        'Readiness: 200 when the read model follows the log (not stopped, at most READY_MAX_LAG_EVENTS behind) and the event log answers; else 503 naming what is not ready',
      responses: {
        200: {
          description: 'Ready to take traffic',
          schema: z.object({
            status: z.literal('ready'),
            position: z
              .string()
              .describe(
                "The highest log position through which this process's read model includes every event",
              ),
            log_head: z.string().describe('The position of the last committed event in the log'),
            lag: z.number().int().describe('How many positions the read model trails the log'),
          }),
        },
        503: problem('Not ready: the read model is stopped or behind, or the event log does not answer'),
      },
      handle: async () => {
        const readiness = await ports.readiness();
        if (!readiness.ready)
          throw unavailable(notReadyDetail(readiness), readiness.retryAfterSeconds, 'Not ready');
        return {
          status: 200,
          headers: NO_STORE,
          body: {
            status: 'ready',
            position: readiness.position.toString(),
            log_head: readiness.head.toString(),
            lag: readiness.lag,
          },
        };
      },
    })
    .add({
      method: 'get',
      path: '/api/metrics',
      tag: 'operations',
      summary: "This process's metrics in Prometheus's text format (docs/operating.md)",
      responses: {
        200: {
          description: 'Prometheus text exposition format 0.0.4',
          schema: z.string(),
          contentType: 'text/plain; version=0.0.4',
        },
      },
      handle: async () => {
        const { contentType, text } = await ports.metrics();
        return { status: 200, headers: { ...NO_STORE, 'Content-Type': contentType }, text };
      },
    });
