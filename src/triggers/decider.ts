import type { TriggerCreated, TriggerDeleted, TriggerFiringEvent, TriggerOwner } from '../../events';
import type { ProjectAggregate } from '../shared/projectState';
import { conflict, invalid } from '../shared/errors';
import { findByName } from '../shared/params';
import {
  decideByType,
  decideInProject,
  deletionByName,
  type Now,
  type ProjectRule,
} from '../shared/decision';
import { requireTrigger, triggerDeleted, type TriggerFiringsState } from './state';

type TriggerDecisionState = Pick<ProjectAggregate, 'project' | 'triggers'>;

export type TriggerCommand =
  | {
      type: 'CreateTrigger';
      data: {
        name: string;
        database: string;
        table: string;
        columns: string[] | null;
        query: string;
        /** What the service installed in the source database under (made before deciding). */
        key: string;
        owner: TriggerOwner;
      };
      metadata: Now;
    }
  | { type: 'DeleteTrigger'; data: { name: string; ifExists: boolean }; metadata: Now };

type TriggerEvent = TriggerCreated | TriggerDeleted;
type Decide<T extends TriggerCommand['type']> = ProjectRule<
  TriggerCommand,
  T,
  TriggerDecisionState,
  TriggerEvent
>;

const createTrigger: Decide<'CreateTrigger'> = (command, state, { project, at }) => {
  const d = command.data;
  if (findByName(state.triggers.values(), d.name))
    throw conflict(`Trigger already exists: ${d.name}`, 'Trigger already exists');
  if (!d.query.trim()) throw invalid('A trigger needs at least one statement', 'Empty trigger');
  return [
    {
      type: 'TriggerCreated',
      data: { projectId: Number(project.id), project: project.name, ...d, createdAt: at },
    },
  ];
};

const deleteTrigger: Decide<'DeleteTrigger'> = (command, state, { project, at }) =>
  deletionByName(state.triggers, command.data, requireTrigger, (trigger) =>
    triggerDeleted(trigger, project, at),
  );

export const decideTrigger = decideInProject<TriggerCommand, TriggerDecisionState, TriggerEvent>({
  CreateTrigger: createTrigger,
  DeleteTrigger: deleteTrigger,
});

export type TriggerFiringCommand =
  | {
      type: 'ClaimFiring';
      data: {
        triggerId: bigint;
        projectId: number;
        claimId: string;
        upTo: number;
        rows: number;
        node: string;
      };
      metadata: Now;
    }
  | { type: 'FinishFiring'; data: { claimId: string; statements: number }; metadata: Now }
  | { type: 'FailFiring'; data: { claimId: string; error: string }; metadata: Now };

type FiringCommand<T extends TriggerFiringCommand['type']> = Extract<TriggerFiringCommand, { type: T }>;

const claimFiring = (
  command: FiringCommand<'ClaimFiring'>,
  state: TriggerFiringsState,
  triggerId: bigint,
): TriggerFiringEvent[] => {
  const at = command.metadata.now.toISOString();
  const d = command.data;
  if (d.upTo <= state.upTo) throw conflict(`Rows up to ${d.upTo} are claimed already`, 'Firing claimed');
  return [
    {
      type: 'TriggerFired',
      data: {
        triggerId: Number(triggerId),
        projectId: d.projectId,
        firing: state.firings + 1,
        claimId: d.claimId,
        upTo: d.upTo,
        rows: d.rows,
        node: d.node,
        firedAt: at,
      },
    },
  ];
};

/** Only an open claim records its firing's outcome: finished, or failed with its error. */
const closeFiring = (
  command: FiringCommand<'FinishFiring' | 'FailFiring'>,
  state: TriggerFiringsState,
  triggerId: bigint,
): TriggerFiringEvent[] => {
  const at = command.metadata.now.toISOString();
  if (!state.open.has(command.data.claimId)) throw conflict('This firing is not open', 'Firing not open');
  const closed = { triggerId: Number(triggerId), claimId: command.data.claimId };
  return [
    command.type === 'FinishFiring'
      ? {
          type: 'TriggerFiringFinished',
          data: { ...closed, statements: command.data.statements, finishedAt: at },
        }
      : { type: 'TriggerFiringFailed', data: { ...closed, error: command.data.error, failedAt: at } },
  ];
};

/**
 * A trigger's firings: a claim takes the queue rows after the last claimed one, up to `upTo`;
 * rows already claimed (by another process) are refused as a conflict, which is how one process
 * wins. Only an open claim records its outcome.
 */
export const decideTriggerFiring = decideByType<
  TriggerFiringCommand,
  TriggerFiringsState,
  TriggerFiringEvent,
  [triggerId: bigint]
>({ ClaimFiring: claimFiring, FinishFiring: closeFiring, FailFiring: closeFiring });
