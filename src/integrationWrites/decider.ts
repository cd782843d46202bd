import type { IntegrationTableWritten } from '../../events';
import type { IntegrationWritesState } from './state';

export type RecordWrite = {
  type: 'RecordWrite';
  data: Omit<IntegrationTableWritten['data'], 'writtenAt' | 'text'> & { text: string };
  metadata: { now: Date };
};

/** The longest statement text a write's event keeps. */
const MAX_WRITE_TEXT = 4000;

/** A committed write is always recorded: the database has it already, the log must say so. */
export const decideWrite = (
  command: RecordWrite,
  _state: IntegrationWritesState,
): IntegrationTableWritten[] => [
  {
    type: 'IntegrationTableWritten',
    data: {
      ...command.data,
      text:
        command.data.text.length > MAX_WRITE_TEXT
          ? `${command.data.text.slice(0, MAX_WRITE_TEXT)}…`
          : command.data.text,
      writtenAt: command.metadata.now.toISOString(),
    },
  },
];
