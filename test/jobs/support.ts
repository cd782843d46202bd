import type { TestApp } from '../support/app';

/** A clock a spec moves by hand: jobs fire when the spec calls the scheduler's `tick()`. */
export const manualClock = (startIso: string) => {
  let now = Date.parse(startIso);
  return {
    clock: () => new Date(now),
    set: (iso: string) => {
      now = Date.parse(iso);
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
};

/** The scheduler's timer is off: specs fire due jobs with `tick()`. */
export const NO_POLL = { JOBS_POLL_MS: '0' };

export type LoggedEvent = {
  position: number;
  type: string;
  data: Record<string, unknown>;
  actor: string | null;
  interface: string | null;
};

export const eventsOf = async (t: TestApp, stream: string) =>
  (
    (await t.http.get(`/api/events?stream=${stream}&limit=1000`).expect(200)).body as {
      events: LoggedEvent[];
    }
  ).events;

export const HOUR = 3_600_000;
