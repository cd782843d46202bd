import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const llmBudgetResource: ResourceDeclaration = { kind: 'llmBudget' };
const llmQueryResource: ResourceDeclaration = { kind: 'llmQuery', id: 'queryId' };

/** Who a budget holds: a user (by name), an access token (by id) or a project (by name). */
export const LLM_BUDGET_SCOPES = ['user', 'token', 'project'] as const;
export type LlmBudgetScope = (typeof LLM_BUDGET_SCOPES)[number];

/** The limits a budget may set, as SQL and REST name them. */
export const LLM_BUDGET_LIMITS = ['calls_per_day', 'tokens_per_day', 'calls_per_query'] as const;
export type LlmBudgetLimit = (typeof LLM_BUDGET_LIMITS)[number];

/** The largest limit a budget may set (a safe integer, so a limit and a sum of spending compare exactly). */
export const MAX_LLM_BUDGET_LIMIT = 1_000_000_000_000;

const limit = z.number().int().min(0).max(MAX_LLM_BUDGET_LIMIT).nullable();

/**
 * An admin set the LLM budget of a user, a token or a project (`CREATE LLM_BUDGET …`, `PUT
 * /api/llm/budgets/{scope}/{subject}`): calls and tokens per day (UTC), calls per query; null: no such
 * limit. On the stream `llm-budgets`; a budget set again replaces the one before.
 */
export const LlmBudgetSet = defineEvent(
  'LlmBudgetSet',
  z.object({
    scope: z.enum(LLM_BUDGET_SCOPES),
    subject: z.string().min(1).max(256),
    callsPerDay: limit,
    tokensPerDay: limit,
    callsPerQuery: limit,
    setAt: z.iso.datetime(),
  }),
  { resource: llmBudgetResource },
);

/** An admin removed a budget (`DROP LLM_BUDGET …`, `DELETE /api/llm/budgets/{scope}/{subject}`). */
export const LlmBudgetDropped = defineEvent(
  'LlmBudgetDropped',
  z.object({
    scope: z.enum(LLM_BUDGET_SCOPES),
    subject: z.string().min(1).max(256),
    droppedAt: z.iso.datetime(),
  }),
  { resource: llmBudgetResource },
);

/**
 * A query refused before its first LLM call: its planned calls (or tokens) would pass a limit. On
 * the query's own stream (`llm-query-<query id>`), beside the calls a query makes. `scope` `server`:
 * the server's per-query cap (LLM_SQL_MAX_CALLS) when no budget sets one; `spent`: today's (or, per
 * query, the query's earlier LLM functions'); tokens are estimated at four prompt characters each.
 */
export const LlmBudgetRefused = defineEvent(
  'LlmBudgetRefused',
  z.object({
    queryId: z.string(),
    scope: z.enum([...LLM_BUDGET_SCOPES, 'server']),
    subject: z.string().nullable(),
    limit: z.enum(LLM_BUDGET_LIMITS),
    allowed: z.number().int().min(0),
    spent: z.number().int().min(0),
    planned: z.number().int().min(0),
    /** `LLM model p.m`, `LLM()`, … */
    what: z.string(),
    caller: z.object({ actor: z.string(), user: z.string().nullable(), role: z.string().nullable() }),
    via: z.string(),
    refusedAt: z.iso.datetime(),
  }),
  { resource: llmQueryResource },
);

export type LlmBudgetSet = EventOf<typeof LlmBudgetSet>;
export type LlmBudgetDropped = EventOf<typeof LlmBudgetDropped>;
export type LlmBudgetRefused = EventOf<typeof LlmBudgetRefused>;
export type LlmBudgetEvent = LlmBudgetSet | LlmBudgetDropped | LlmBudgetRefused;
export const llmBudgetContracts = [LlmBudgetSet, LlmBudgetDropped, LlmBudgetRefused] as const;
