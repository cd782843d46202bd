import { actorName } from '../shared/requestContext';
import type { McpCallRecorded } from '../../events';
import { answeredAhead, type AppContext } from '../context';
import { eventLeafHash, verifyCheckpoint, verifyInclusion } from '../ledger';
import { isDomainError } from '../shared/errors';
import type { Principal, RequestContext } from '../shared/requestContext';
import { decideCall } from './decider';
import type { McpPorts } from './ports';
import { answerHashOf, argumentsOf, eventText } from './present';
import { sessionAggregate, sessionStream } from './state';

/**
 * Who is calling: the request's context (actor, role and scope) as the guard made it, its principal
 * narrowed by the connection's switches (src/mcp/switches.ts), so every tool runs as the narrowed
 * caller; `user`, when given, is the signed-in user (null: sign-in off) the record names, whatever
 * principal the switches made.
 */
export type Caller = { readonly request: RequestContext; readonly user?: string | null };

export const actorOf = (caller: Caller) =>
  caller.request.actor ? actorName(caller.request.actor) : 'system:unknown';

const principalOf = (caller: Caller): Principal | undefined => caller.request.principal;

/**
 * What is known of the session a call came in: its id and the client as `initialize` named it. A
 * stateless (2026-07-28) call has no session: its own id (`stateless-<uuid>`) and the client and
 * revision its request's envelope names (src/mcp/stateless.ts).
 */
export type SessionView = {
  readonly id: string;
  readonly client: { readonly name: string; readonly version: string } | null;
  readonly protocolVersion: string | null;
};

type CallOutcome = McpCallRecorded['data']['outcome'];

/** What the server answered, and what the record says of it. */
export type Completed<R extends object = object> = {
  readonly result: R;
  readonly outcome: CallOutcome;
  readonly error: string | null;
  readonly project: string | null;
  readonly rowCount: number | null;
  readonly truncated: boolean;
  readonly traceId: string | null;
};

/** Where a call's record is, for the client to prove it later (the result's `_meta`). */
type CallReceipt = {
  readonly position: number;
  readonly stream: string;
  readonly seq: number;
  readonly answer_hash: string;
  /** The ledger's inclusion proof, once the next checkpoint covers the call. */
  readonly proof: string;
  /** The tool that checks the call and its answer against the signed tree. */
  readonly verify: {
    readonly tool: 'verify_call';
    readonly arguments: { position: number; answer_hash: string };
  };
};

export const RECEIPT_META_KEY = 'io.mindledger/call';

/** How the routes hand the session server who is calling: in the SDK's `authInfo.extra`. */
export const CALLER_KEY = 'mindledger.caller';
/** …and the switches its URL gave, which a stateless request's server is made with (src/mcp/stateless.ts). */
export const SWITCHES_KEY = 'mindledger.switches';

const sameBase64 = (a: Uint8Array, b: string) => Buffer.from(a).equals(Buffer.from(b, 'base64'));

/**
 * The record of MCP calls: each call is an event on its session's stream, appended before the
 * answer goes out (no answer without its record), and verified later against the ledger.
 */
export const mcpCallsService = (ctx: AppContext, ports: McpPorts) => {
  /** Appends the call's record; the receipt the answer carries. */
  const record = async (
    session: SessionView,
    caller: Caller,
    call: { method: string; target: string; args: unknown; startedAt: number },
    completed: Completed,
  ): Promise<CallReceipt> => {
    const principal = principalOf(caller);
    const answerHash = answerHashOf(completed.result);
    const stream = sessionStream(session.id);
    const outcome = await ctx.commands.run(stream, sessionAggregate, (state) =>
      decideCall(
        {
          type: 'RecordCall',
          data: {
            sessionId: session.id,
            method: call.method,
            target: eventText(call.target, 512),
            ...argumentsOf(call.target, call.args),
            project: completed.project === null ? null : eventText(completed.project, 256),
            caller: {
              actor: eventText(actorOf(caller), 256),
              user:
                caller.user !== undefined
                  ? caller.user === null
                    ? null
                    : eventText(caller.user, 256)
                  : principal
                    ? eventText(principal.user, 256)
                    : null,
              role: principal?.role ?? null,
              scope: principal?.project ?? null,
            },
            client: session.client
              ? { name: eventText(session.client.name, 256), version: eventText(session.client.version, 256) }
              : null,
            protocolVersion: session.protocolVersion === null ? null : eventText(session.protocolVersion, 64),
            outcome: completed.outcome,
            error: completed.error === null ? null : eventText(completed.error, 2_000),
            rowCount: completed.rowCount,
            truncated: completed.truncated,
            answerHash,
            traceId: completed.traceId,
            ms: Math.max(0, Math.round(performance.now() - call.startedAt)),
            calledAt: ctx.clock().toISOString(),
          },
        },
        state,
      ),
    );
    // This process's next reads (information_schema.MCP_CALLS) wait for the record; the answer need not.
    answeredAhead(ctx, outcome.events);
    const event = outcome.events.at(-1)!;
    const position = Number(event.meta.position);
    const seq = event.type === 'McpCallRecorded' ? event.data.seq : 0;
    return {
      position,
      stream,
      seq,
      answer_hash: answerHash,
      proof: `/api/audit/proof/${position}`,
      verify: { tool: 'verify_call', arguments: { position, answer_hash: answerHash } },
    };
  };

  /**
   * Checks a recorded call against the signed tree: the event at `position` is an MCP call, its
   * leaf (recomputed from the log as it is now) is in the latest signed checkpoint's tree, the
   * checkpoint's signature verifies, and (given) the answer hash is the recorded one. Admins and
   * auditors check any call; anyone else the calls made with their own credentials.
   */
  const verify = async (caller: Caller, position: number, answerHash: string | undefined) => {
    const at = BigInt(position);
    const event = await ctx.log.eventAt(at);
    if (event?.type !== 'McpCallRecorded')
      return { verified: false, position, reason: `The event at position ${position} is not an MCP call` };
    const principal = principalOf(caller);
    const mayRead =
      !principal ||
      (principal.project === null && (principal.role === 'admin' || principal.role === 'auditor')) ||
      event.data.caller.actor === actorOf(caller);
    if (!mayRead)
      return {
        verified: false,
        position,
        reason: 'This call was made by another caller: only admins and auditors verify those',
      };
    let proof;
    try {
      proof = await ports.ledger.proof(at);
    } catch (error) {
      if (isDomainError(error) && error.kind === 'NotFound')
        return { verified: false, pending: true, position, reason: error.detail };
      throw error;
    }
    const leafHash = eventLeafHash(event);
    const leafInTree = verifyInclusion(
      leafHash,
      proof.leaf_index,
      proof.tree_size,
      proof.inclusion_path.map((h) => Buffer.from(h, 'base64')),
      Buffer.from(proof.root_hash, 'base64'),
    );
    const signed = verifyCheckpoint(proof.checkpoint, ports.ledger.trustedKeys());
    const checkpointSigned =
      signed.ok &&
      signed.checkpoint.treeSize === proof.tree_size &&
      sameBase64(signed.checkpoint.rootHash, proof.root_hash);
    const answerMatches = answerHash === undefined ? null : answerHash === event.data.answerHash;
    const verified = leafInTree && checkpointSigned && answerMatches !== false;
    return {
      verified,
      position,
      leaf_index: proof.leaf_index,
      tree_size: proof.tree_size,
      root_hash: proof.root_hash,
      leaf_hash: Buffer.from(leafHash).toString('base64'),
      checks: {
        leaf_in_signed_tree: leafInTree,
        checkpoint_signature: checkpointSigned,
        answer_hash: answerMatches,
      },
      call: {
        session_id: event.data.sessionId,
        seq: event.data.seq,
        method: event.data.method,
        target: event.data.target,
        outcome: event.data.outcome,
        answer_hash: event.data.answerHash,
        called_at: event.data.calledAt,
      },
      checkpoint: proof.checkpoint,
      ...(verified
        ? {}
        : {
            reason: !leafInTree
              ? 'The event as the log holds it now is not the one the signed tree holds: it was changed after it was recorded'
              : !checkpointSigned
                ? `The checkpoint does not verify against the trusted keys${signed.ok ? '' : `: ${signed.reason}`}`
                : 'The answer hash is not the one recorded for this call',
          }),
    };
  };

  return { record, verify };
};

export type McpCalls = ReturnType<typeof mcpCallsService>;
