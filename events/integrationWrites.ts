import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const integrationWriteResource: ResourceDeclaration = { kind: 'integrationWrite' };

/**
 * A write this service made into an external database, recorded once the database committed it:
 * which statement, on which table, how many rows it changed (who: the event's actor). On a stream
 * of its own per database (`database-writes-<name>`), never a project's.
 */
export const IntegrationTableWritten = defineEvent(
  'IntegrationTableWritten',
  z.object({
    database: z.string(),
    table: z.string(),
    statement: z.enum([
      'CREATE TABLE',
      'CREATE OR REPLACE TABLE',
      'INSERT',
      'UPDATE',
      'DELETE',
      'DROP TABLE',
    ]),
    /** The statement as the client sent it (cut at 4,000 characters). */
    text: z.string(),
    rowsAffected: z.number().int().min(0),
    writtenAt: z.iso.datetime(),
  }),
  { resource: integrationWriteResource },
);

export type IntegrationTableWritten = EventOf<typeof IntegrationTableWritten>;
export type IntegrationWriteEvent = IntegrationTableWritten;
export const integrationWriteContracts = [IntegrationTableWritten] as const;
