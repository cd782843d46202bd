import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Switches } from './switches';

/**
 * One open MCP session: its transport (Streamable HTTP at `/mcp/`, or the older HTTP+SSE at
 * `/mcp/sse`), its server, who opened it, when it was last used.
 */
export type Session = {
  readonly id: string;
  readonly transport: StreamableHTTPServerTransport | SSEServerTransport;
  readonly server: Server;
  /** The actor that initialized it (`token:<id>`, `user:<id>`, `address:<ip>`): only they use it. */
  readonly owner: string;
  /** Whose share of the room it takes: its principal's user name (every token of a user alike), else its owner. */
  readonly principal?: string;
  /** The switches of the URL it was opened with (read_only, project, features; none: off): they hold for its life. */
  readonly switches?: Switches;
  lastUsed: number;
};

/**
 * The sessions this process holds, in memory (Streamable HTTP's session mode), capped per principal
 * (a user, whichever of their tokens or sessions opened it): a principal past `perPrincipal`
 * sessions has its own idlest one closed to make room, and with the process at `max`, the idlest
 * session of the principal holding the most is. So one caller's `initialize` loop closes only its
 * own sessions, never another's. Any session unused for `idleMs` is closed when the registry is
 * next touched (no timer to outlive the app). A client whose session is gone gets 404 and
 * initializes again, as the protocol says; what it did stays in the log.
 */
export const sessionRegistry = (options: {
  max: number;
  idleMs: number;
  /** Sessions one principal holds at most (default: a quarter of `max`, at least 1). */
  perPrincipal?: number;
  now?: () => number;
}) => {
  const perPrincipal = options.perPrincipal ?? Math.max(1, Math.floor(options.max / 4));
  const now = options.now ?? (() => Date.now());
  const sessions = new Map<string, Session>();
  let swept = 0;

  const close = (session: Session) => {
    sessions.delete(session.id);
    void session.transport.close().catch(() => undefined);
    void session.server.close().catch(() => undefined);
  };

  const principalOf = (s: Session) => s.principal ?? s.owner;
  const idlest = (of: Session[]) => of.reduce((a, b) => (a.lastUsed <= b.lastUsed ? a : b));
  /** The principal holding the most sessions. */
  const busiestPrincipal = () => {
    const counts = new Map<string, number>();
    for (const s of sessions.values()) counts.set(principalOf(s), (counts.get(principalOf(s)) ?? 0) + 1);
    return [...counts].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  };

  /** Closes idle sessions, at most once a second. */
  const sweep = () => {
    const t = now();
    if (t - swept < 1000) return;
    swept = t;
    for (const session of [...sessions.values()]) if (t - session.lastUsed > options.idleMs) close(session);
  };

  return {
    /** The session, if it is open and `owner`'s (anyone else is told it does not exist). */
    use: (id: string, owner: string): Session | undefined => {
      sweep();
      const session = sessions.get(id);
      if (!session || session.owner !== owner) return undefined;
      session.lastUsed = now();
      return session;
    },
    add: (session: Session) => {
      sweep();
      const mine = (s: Session) => principalOf(s) === principalOf(session);
      while ([...sessions.values()].filter(mine).length >= perPrincipal)
        close(idlest([...sessions.values()].filter(mine)));
      while (sessions.size >= options.max) {
        const busiest = busiestPrincipal();
        close(idlest([...sessions.values()].filter((s) => principalOf(s) === busiest)));
      }
      sessions.set(session.id, session);
    },
    /** The transport closed it (DELETE /mcp/, or an SSE stream that ended). */
    forget: (id: string) => {
      sessions.delete(id);
    },
    size: () => sessions.size,
    closeAll: () => {
      for (const session of [...sessions.values()]) close(session);
    },
  };
};
