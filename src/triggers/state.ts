import type { RecordedEvent, TriggerDeleted, TriggerOwner } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { defineResourcesSlice, requireNamed, withoutResource, withResource } from '../shared/resourceState';
import type { ProjectRef } from '../shared/projectState';

/** A trigger as its project's stream knows it. Its id is the log position of its creation. */
export type Trigger = {
  readonly id: bigint;
  readonly name: string;
  readonly database: string;
  readonly table: string;
  readonly key: string;
  /** The statements a firing runs, as the log holds them (the read model's copy has secrets masked). */
  readonly query: string;
  readonly owner: TriggerOwner;
};
export type TriggersState = ReadonlyMap<bigint, Trigger>;

const evolveTriggers = (triggers: TriggersState, event: RecordedEvent): TriggersState => {
  switch (event.type) {
    case 'TriggerCreated': {
      const d = event.data;
      return withResource(triggers, {
        id: event.meta.position,
        name: d.name,
        database: d.database,
        table: d.table,
        key: d.key,
        query: d.query,
        owner: d.owner,
      });
    }
    case 'TriggerDeleted':
      return withoutResource(triggers, event.data.triggerId);
    default:
      return triggers;
  }
};

export const requireTrigger = (triggers: TriggersState, name: string): Trigger =>
  requireNamed(triggers, name, 'Trigger');

/** The event deleting `trigger`: DROP TRIGGER's and its project's deletion's. */
export const triggerDeleted = (trigger: Trigger, project: ProjectRef, at: string): TriggerDeleted => ({
  type: 'TriggerDeleted',
  data: { projectId: Number(project.id), triggerId: Number(trigger.id), name: trigger.name, deletedAt: at },
});

export const triggersSlice = defineResourcesSlice('triggers', evolveTriggers, triggerDeleted);

/** The stream of one trigger's firings: claims and outcomes, never the project's stream. */
export const triggerFiringsStream = (triggerId: bigint) => `trigger-firings-${triggerId}`;

/** The last queue row claimed, how many firings, and which claims are still running. */
export type TriggerFiringsState = {
  readonly upTo: number;
  readonly firings: number;
  readonly open: ReadonlySet<string>;
};

export const triggerFiringsAggregate: Aggregate<TriggerFiringsState> = {
  initialState: () => ({ upTo: 0, firings: 0, open: new Set() }),
  evolve: (state, event: RecordedEvent) => {
    switch (event.type) {
      case 'TriggerFired':
        return {
          upTo: event.data.upTo,
          firings: event.data.firing,
          open: new Set([...state.open, event.data.claimId]),
        };
      case 'TriggerFiringFinished':
      case 'TriggerFiringFailed': {
        const open = new Set(state.open);
        open.delete(event.data.claimId);
        return { ...state, open };
      }
      default:
        return state;
    }
  },
};
