import { z } from 'zod';
import { allContracts, defineEvent } from '../../events';
import { contractRegistry } from '../../src/eventlog/registry';

const meta = {
  position: 5n,
  stream: 's',
  streamPosition: 1n,
  eventId: 'e',
  recordedAt: '2026-01-01T00:00:00.000Z',
};

describe('the event contract', () => {
  // A v2 contract that split `fullName` into `name` + `title`: old events in the log stay as written.
  const renamed = defineEvent('ThingRenamed', z.object({ name: z.string(), title: z.string() }), {
    version: 2,
    upcasters: {
      1: (data) => {
        const { fullName } = data as { fullName: string };
        const [title = '', ...rest] = fullName.split(' ');
        return { name: rest.join(' '), title };
      },
    },
  });
  const registry = contractRegistry([renamed]);

  it('upcasts an old event version when it is read', () => {
    const event = registry.upcast('ThingRenamed', { fullName: 'Dr Who' }, { ...meta, schemaVersion: 1 });
    expect(event.data).toEqual({ name: 'Who', title: 'Dr' });
    expect(event.meta.schemaVersion).toBe(1);
  });

  it('leaves current versions alone', () => {
    const event = registry.upcast('ThingRenamed', { name: 'x', title: 'y' }, { ...meta, schemaVersion: 2 });
    expect(event.data).toEqual({ name: 'x', title: 'y' });
  });

  it('validates events before they are written and stamps the schema version', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(registry.prepareForAppend({ type: 'ThingRenamed', data: { name: 'a', title: 'b' } }, now)).toEqual(
      {
        type: 'ThingRenamed',
        data: { name: 'a', title: 'b' },
        metadata: { messageId: expect.any(String), recordedAt: now.toISOString(), schemaVersion: 2 },
      },
    );
    expect(() => registry.prepareForAppend({ type: 'ThingRenamed', data: { name: 1 } }, now)).toThrow();
    expect(() => registry.prepareForAppend({ type: 'Unknown', data: {} }, now)).toThrow(
      /not part of the contract/,
    );
  });

  it('has unique type names', () => {
    const names = allContracts.map((c) => c.type);
    expect(new Set(names).size).toBe(names.length);
  });
});
