import type net from 'node:net';
import { PreAuthGate } from '../shared/preAuthGate';
import { plainAddress } from './address';

/**
 * What both wire doors do with a socket before its protocol speaks, in one place: refuse it when
 * the signed-in room is full, else put it in the pre-authentication room (src/shared/preAuthGate.ts:
 * bounded in all and per address, the oldest dropped past either) until it signs in, then count it
 * among the signed-in until it ends.
 */
export const admission = (o: {
  maxConnections: number;
  maxPreAuth: number;
  maxPreAuthPerAddress: number;
}) => {
  const preAuth = new PreAuthGate({ max: o.maxPreAuth, perAddress: o.maxPreAuthPerAddress });
  let signedIn = 0;
  return {
    /** The signed-in room is full: the newcomer gets the protocol's "too many connections". */
    full: () => signedIn >= o.maxConnections,
    /**
     * A socket enters the pre-authentication room (`drop` ends it if the room drops it): its
     * connection calls `loggedIn` once signed in and `ended` once gone (both idempotent).
     */
    admit: (socket: net.Socket, drop: () => void) => {
      const ticket = preAuth.admit(plainAddress(socket.remoteAddress ?? ''), drop);
      let counted = false;
      return {
        loggedIn: () => {
          ticket.leave();
          if (counted) return;
          counted = true;
          signedIn++;
        },
        ended: () => {
          ticket.leave();
          if (!counted) return;
          counted = false;
          signedIn--;
        },
      };
    },
  };
};

type Admission = ReturnType<typeof admission>;
export type Ticket = ReturnType<Admission['admit']>;
