import { z } from 'zod';
import {
  allContracts,
  boundsViolationDetail,
  AgentCreated,
  DatabaseCreated,
  defineEvent,
  SkillCreated,
} from '../../events';
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

  describe('bounds every event holds, so an accepted event stays readable', () => {
    const nested = (levels: number): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = { a: value };
      return value;
    };
    const skill = (params: Record<string, unknown>, name = 'n') => ({
      projectId: 1,
      project: 'p',
      name,
      type: 'custom',
      params,
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    const refusal = (data: unknown) => {
      const result = SkillCreated.schema.safeParse(data);
      expect(result.success).toBe(false);
      return boundsViolationDetail(result.error);
    };

    it('accepts free-form values nested up to MAX_JSON_DEPTH (64) levels', () => {
      expect(SkillCreated.schema.safeParse(skill(nested(64) as Record<string, unknown>)).success).toBe(true);
    });

    it('refuses deeper ones, however deep, naming the field and the limit', () => {
      for (const levels of [65, 3000, 100_000])
        expect(refusal(skill(nested(levels) as Record<string, unknown>))).toBe(
          'params.a.a.a.a.a.a.a… is nested deeper than 64 levels (MAX_JSON_DEPTH)',
        );
    });

    it('refuses NUL characters in keys and strings, anywhere in the event', () => {
      expect(refusal(skill({ 'a\u0000b': 1 }))).toBe('params["a\\u0000b"] has a key holding a NUL character');
      expect(refusal(skill({ a: ['x', 'y\u0000'] }))).toBe('params.a[1] holds a NUL character');
      expect(refusal(skill({}, 'bad\u0000name'))).toBe('name holds a NUL character');
    });

    it('refuses events larger than MAX_EVENT_BYTES (1 MiB)', () => {
      expect(refusal(skill({ text: 'x'.repeat(1024 * 1024) }))).toMatch(
        /is larger than 1048576 bytes as JSON \(MAX_EVENT_BYTES\)/,
      );
      expect(SkillCreated.schema.safeParse(skill({ text: 'x'.repeat(1000 * 1024) })).success).toBe(true);
    });

    it('says nothing about a malformed event: that is a bug, not a bound', () => {
      const result = SkillCreated.schema.safeParse({ ...skill({}), projectId: 'one' });
      expect(boundsViolationDetail(result.error)).toBeNull();
    });

    it('bounds the free-form values of other contracts too: per-skill parameters of agents, databases', () => {
      const agent = AgentCreated.schema.safeParse({
        projectId: 1,
        project: 'p',
        name: 'a',
        modelName: null,
        provider: null,
        params: {},
        skills: [{ skillId: 2, parameters: { tables: nested(65) } }],
        createdAt: '2026-01-01T00:00:00.000Z',
      });
      expect(boundsViolationDetail(agent.error)).toMatch(
        /^skills\[0\]\.parameters\.tables\.a.* \(MAX_JSON_DEPTH\)$/,
      );
      const database = DatabaseCreated.schema.safeParse({
        name: 'd',
        engine: 'postgres',
        parameters: { password: 'x\u0000' },
        createdAt: '2026-01-01T00:00:00.000Z',
      });
      expect(boundsViolationDetail(database.error)).toBe('parameters.password holds a NUL character');
    });
  });
});
