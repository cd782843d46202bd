import { canonicalJson, leafText } from '../../src/ledger/canonical';

describe('who is sealed with the event (ledger leaf)', () => {
  const base = {
    type: 'ProjectCreated',
    data: { name: 'p' },
    meta: {
      position: 7n,
      stream: 'project-p',
      eventId: 'e',
      recordedAt: '2026-01-01T00:00:00.000Z',
      schemaVersion: 1,
    },
  };
  const withActor = { ...base, meta: { ...base.meta, actor: 'user:3', requestId: 'r-1', via: 'sql' } };

  it('writes actor, requestId and via in canonical (sorted) order', () => {
    const leaf = leafText(withActor);
    expect(leaf).toBe(
      canonicalJson({
        type: 'ProjectCreated',
        data: { name: 'p' },
        position: '7',
        stream: 'project-p',
        metadata: {
          eventId: 'e',
          recordedAt: '2026-01-01T00:00:00.000Z',
          schemaVersion: 1,
          actor: 'user:3',
          requestId: 'r-1',
          via: 'sql',
        },
      }),
    );
  });

  it('changes the leaf when the actor is edited, and leaves older events (no actor) as they were', () => {
    expect(leafText({ ...withActor, meta: { ...withActor.meta, actor: 'user:4' } })).not.toBe(
      leafText(withActor),
    );
    expect(leafText(base)).not.toContain('actor');
  });
});
