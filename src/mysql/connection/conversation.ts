import { serverStatus, type Status } from '../protocol/packets';
import type { Session } from '../session/session';
import type { ClientChannel } from './clientChannel';

/** A logged-in client as commands answer it: its channel, its session, and how it reads results. */
export type Conversation = {
  readonly channel: ClientChannel;
  readonly session: Session;
  /** The client ends result sets with an OK rather than EOF packets (CLIENT_DEPRECATE_EOF). */
  readonly deprecateEof: boolean;
  /** Rows a result may carry at most (streamed results; the engine cuts its own answers). */
  readonly maxRows: number | undefined;
};

/** The status of an answer: the session's warning count, and whether more results follow. */
export const statusOf = (c: Conversation, more = false): Status =>
  serverStatus(c.session.warningCount(), more);
