import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** One open MCP session: its transport and server, who opened it, when it was last used. */
export type Session = {
  readonly id: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  /** The actor that initialized it (`token:<id>`, `user:<id>`, `address:<ip>`): only they use it. */
  readonly owner: string;
  lastUsed: number;
};

/**
 * The sessions this process holds, in memory (Streamable HTTP's session mode): at most `max`, the
 * one idle longest closed to make room, and any unused for `idleMs` closed when the registry is next
 * touched (no timer to outlive the app). A client whose session is gone gets 404 and initializes
 * again, as the protocol says; what it did stays in the log.
 */
export const sessionRegistry = (options: { max: number; idleMs: number; now?: () => number }) => {
  const now = options.now ?? (() => Date.now());
  const sessions = new Map<string, Session>();
  let swept = 0;

  const close = (session: Session) => {
    sessions.delete(session.id);
    void session.transport.close().catch(() => undefined);
    void session.server.close().catch(() => undefined);
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
      while (sessions.size >= options.max) {
        const oldest = [...sessions.values()].reduce((a, b) => (a.lastUsed <= b.lastUsed ? a : b));
        close(oldest);
      }
      sessions.set(session.id, session);
    },
    /** The transport closed it (DELETE /mcp/). */
    forget: (id: string) => {
      sessions.delete(id);
    },
    size: () => sessions.size,
    closeAll: () => {
      for (const session of [...sessions.values()]) close(session);
    },
  };
};

export type SessionRegistry = ReturnType<typeof sessionRegistry>;
