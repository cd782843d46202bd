import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { RecordedEvent } from '../../events';
import { decideAgent, type AgentCommand } from '../../src/agents/decider';
import { commandRunner, type CommandOutcome } from '../../src/eventlog/commands';
import { openEventLog } from '../../src/eventlog/open';
import { AppendRefused, type EventLog, type NewEvent } from '../../src/eventlog/types';
import { projectAggregate } from '../../src/projects/aggregate';
import type { ProjectAggregate } from '../../src/shared/projectState';
import { decideProject, type ProjectCommand } from '../../src/projects/decider';
import { projectStream } from '../../src/shared/projectState';
import { withRequest } from '../../src/shared/requestContext';
import { decideSkill, type SkillCommand } from '../../src/skills/decider';
import { storeKinds } from '../support/app';
import { freshPostgresDatabase } from '../support/postgres';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

// The promise of group commit: commands sent together to one stream end exactly as if each had been
// run alone, one after another, in the order they were sent: the same events in the log (ids
// included), the same refusals, each event carrying the actor of the request that caused it.
// Beside it, a kill check: a group appended without its commands' causes (each event then carries
// the request of whoever's turn appended it) is caught at the count `npm test` runs.

const now = { now: new Date('2026-01-01T00:00:00Z') };
const STREAM = projectStream('gc');
const skillNames = ['a', 'b', 'c'];
const agentNames = ['x', 'y'];

type Command =
  | { slice: 'skill'; command: SkillCommand }
  | { slice: 'agent'; command: AgentCommand }
  | { slice: 'project'; command: ProjectCommand };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc
    .record({
      name: fc.constantFrom(...skillNames),
      // A NUL or a lone surrogate is refused by the log's contract when appended, not by the decider.
      note: fc.constantFrom('fine', 'also fine', 'nul\u0000inside', 'lone\ud800surrogate'),
      sql: fc.boolean(),
    })
    .map(({ name, note, sql }) => ({
      slice: 'skill' as const,
      command: {
        type: 'CreateSkill' as const,
        // A sql skill without a database is refused by the decider.
        data: { name, type: sql ? 'sql' : 'text', params: { note } },
        metadata: now,
      },
    })),
  fc.record({ ref: fc.constantFrom(...skillNames), v: fc.integer({ min: 0, max: 9 }) }).map(({ ref, v }) => ({
    slice: 'skill' as const,
    command: { type: 'PutSkill' as const, data: { ref, params: { v } }, metadata: now },
  })),
  fc.constantFrom(...skillNames).map((ref) => ({
    slice: 'skill' as const,
    command: { type: 'DeleteSkill' as const, data: { ref }, metadata: now },
  })),
  fc
    .record({
      name: fc.constantFrom(...agentNames),
      skills: fc.subarray(skillNames, { maxLength: 2 }),
    })
    .map(({ name, skills }) => ({
      slice: 'agent' as const,
      command: {
        type: 'CreateAgent' as const,
        data: {
          name,
          modelName: null,
          provider: null,
          params: {},
          skills: skills.map((ref) => ({ ref, parameters: {} })),
        },
        metadata: now,
      },
    })),
  fc.constantFrom(...agentNames).map((ref) => ({
    slice: 'agent' as const,
    command: { type: 'DeleteAgent' as const, data: { ref }, metadata: now },
  })),
  fc.constantFrom<ProjectCommand['type']>('CreateProject', 'DeleteProject').map((type) => ({
    slice: 'project' as const,
    command: { type, data: { name: 'gc' }, metadata: now } as ProjectCommand,
  })),
);

const decision =
  (c: Command) =>
  (state: ProjectAggregate): readonly NewEvent[] => {
    switch (c.slice) {
      case 'skill':
        return decideSkill(c.command, state);
      case 'agent':
        return decideAgent(c.command, state);
      case 'project':
        return decideProject(c.command, state);
    }
  };

type Settled = { ok: true; events: readonly RecordedEvent[] } | { ok: false; error: string };
const settle = (p: Promise<CommandOutcome<ProjectAggregate>>): Promise<Settled> =>
  p.then(
    (o) => ({ ok: true as const, events: o.events }),
    (e: unknown) => ({ ok: false as const, error: e instanceof Error ? e.message : String(e) }),
  );

/** Events with every position of this log written as the stream position it belongs to. */
const normalised = (stream: readonly RecordedEvent[]) => {
  const ordinal = new Map(stream.map((e) => [String(e.meta.position), `#${e.meta.streamPosition}`]));
  const rewrite = (v: unknown): unknown => {
    if (typeof v === 'number' || typeof v === 'bigint') return ordinal.get(String(v)) ?? v;
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rewrite(x)]));
    return v;
  };
  return (events: readonly RecordedEvent[]) =>
    events.map((e) => ({ type: e.type, data: rewrite(e.data), requestId: e.meta.requestId }));
};

const openLog = async (kind: string) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-gc-'));
  const pg = kind === 'postgres' ? await freshPostgresDatabase() : undefined;
  const log = await openEventLog({ url: pg?.url, dataDir, clock: () => new Date() });
  return {
    log,
    dispose: async () => {
      await log.close();
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

/** The log, its appends' causes dropped: events carry the request whose turn appends them (the bug). */
const withoutCauses = (log: EventLog): EventLog => ({
  ...log,
  append: (stream, events, expectedVersion) => log.append(stream, events, expectedVersion),
});

const inRequest = <T>(i: number, fn: () => T) =>
  withRequest({ requestId: `r${i}`, interface: 'rest', actor: { kind: 'address', id: `client-${i}` } }, fn);

const streamOf = async (log: EventLog) => (await log.readStream(STREAM, 0n)).events;

const wavesArb = fc.array(fc.array(commandArb, { minLength: 1, maxLength: 12 }), {
  minLength: 1,
  maxLength: 4,
});
const maxBatchArb = fc.integer({ min: 1, max: 6 });

/**
 * Sends the waves of commands to a runner on one log (through `wrap`, the log the runner is given)
 * and one by one to a runner on another; whether the logs, ids, refusals and requests are the same.
 */
const endsAsOneByOne = async (
  kind: string,
  waves: Command[][],
  maxBatch: number,
  wrap: (log: EventLog) => EventLog = (log) => log,
) => {
  const together = await openLog(kind);
  const alone = await openLog(kind);
  try {
    const grouped = commandRunner(wrap(together.log), { maxBatch });
    const sequential = commandRunner(alone.log);
    const first: Command = {
      slice: 'project',
      command: { type: 'CreateProject', data: { name: 'gc' }, metadata: now },
    };
    const all = [first, ...waves.flat()];
    const groupedResults: Settled[] = [
      await settle(inRequest(0, () => grouped.run(STREAM, projectAggregate, decision(first)))),
    ];
    let i = 1;
    for (const wave of waves) {
      // Sent in one go: every command of the wave waits for the stream together.
      const sent = wave.map((c) => {
        const n = i++;
        return settle(inRequest(n, () => grouped.run(STREAM, projectAggregate, decision(c))));
      });
      groupedResults.push(...(await Promise.all(sent)));
    }
    const sequentialResults: Settled[] = [];
    for (const [n, c] of all.entries())
      sequentialResults.push(
        await settle(inRequest(n, () => sequential.run(STREAM, projectAggregate, decision(c)))),
      );

    const groupedLog = await streamOf(together.log);
    const sequentialLog = await streamOf(alone.log);
    const g = normalised(groupedLog);
    const s = normalised(sequentialLog);
    expect(g(groupedLog)).toEqual(s(sequentialLog));
    expect(groupedResults.map((r) => (r.ok ? { events: g(r.events) } : r))).toEqual(
      sequentialResults.map((r) => (r.ok ? { events: s(r.events) } : r)),
    );
    // What each command was told it appended is what the log holds (positions included).
    const byStreamPosition = new Map(groupedLog.map((e) => [e.meta.streamPosition, e]));
    for (const r of groupedResults)
      if (r.ok) for (const e of r.events) expect(e).toEqual(byStreamPosition.get(e.meta.streamPosition));
    // Each command's events carry its own request.
    for (const [n, r] of groupedResults.entries())
      if (r.ok) for (const e of r.events) expect(e.meta.requestId).toBe(`r${n}`);
  } finally {
    await together.dispose();
    await alone.dispose();
  }
};

describe.each(storeKinds)('group commit on %s', (kind) => {
  const settings = { seed: propertySeed(), numRuns: propertyRuns(kind === 'postgres' ? 15 : 40) };

  it('given commands sent together to one stream, then the log, ids and refusals are those of running them one by one in that order', async () => {
    await fc.assert(
      fc.asyncProperty(wavesArb, maxBatchArb, (waves, maxBatch) => endsAsOneByOne(kind, waves, maxBatch)),
      settings,
    );
    // Each run starts two apps on fresh databases: ~20 s for the PostgreSQL runs on a quiet machine.
  }, 120_000);

  it('kill check: a group appended without its commands’ causes is caught', async () => {
    await expectCaught(
      fc.asyncProperty(wavesArb, maxBatchArb, (waves, maxBatch) =>
        endsAsOneByOne(kind, waves, maxBatch, withoutCauses),
      ),
      settings,
    );
  }, 120_000);
});

describe('a writer deciding on its cached state while another process writes (PostgreSQL)', () => {
  it('given another writer created and deleted resources since, then refusals and no-ops are judged on the log, and appends never go stale', async () => {
    const shared = await openLog('postgres');
    try {
      // Two runners (two processes' worth of caches) on one log; neither observes the other's writes.
      const a = commandRunner(shared.log, { trustCachedStreams: true });
      const b = commandRunner(shared.log, { trustCachedStreams: true });
      const run = (r: typeof a, c: Command) => settle(r.run(STREAM, projectAggregate, decision(c)));
      const skill = (type: 'CreateSkill' | 'DeleteSkill', name: string): Command =>
        type === 'CreateSkill'
          ? { slice: 'skill', command: { type, data: { name, type: 'text', params: {} }, metadata: now } }
          : { slice: 'skill', command: { type, data: { ref: name }, metadata: now } };
      await run(a, {
        slice: 'project',
        command: { type: 'CreateProject', data: { name: 'gc' }, metadata: now },
      });
      expect(await run(b, skill('CreateSkill', 'early'))).toMatchObject({ ok: true });
      // a's cache does not hold "early": a delete must not answer 404 from it.
      expect(await run(a, skill('DeleteSkill', 'early'))).toMatchObject({ ok: true });
      // b's cache still holds "early": creating it again must see the delete, not refuse from memory.
      expect(await run(b, skill('CreateSkill', 'early'))).toMatchObject({ ok: true });
      // a's cache lacks the re-creation: a second create must be refused (409), never a duplicate.
      expect(await run(a, skill('CreateSkill', 'early'))).toEqual({
        ok: false,
        error: 'Skill with name early already exists. Please use a different name',
      });
      const types = (await streamOf(shared.log)).map((e) => e.type);
      expect(types).toEqual(['ProjectCreated', 'SkillCreated', 'SkillDeleted', 'SkillCreated']);
    } finally {
      await shared.dispose();
    }
  });
});

describe.each(storeKinds)('an append the store refuses, among commands sent together (%s)', (kind) => {
  it('given a few commands whose events the store cannot hold among many, then only those fail, with a 400, and the others are appended', async () => {
    const opened = await openLog(kind);
    try {
      // The real log, refusing as PostgreSQL refuses a value it cannot store (a data exception).
      const refusing: EventLog = {
        ...opened.log,
        append: (stream, events, expected, causes) =>
          events.some((e) => JSON.stringify(e.data).includes('unstorable'))
            ? Promise.reject(new AppendRefused('unsupported Unicode escape sequence'))
            : opened.log.append(stream, events, expected, causes),
      };
      const runner = commandRunner(refusing);
      const create = (name: string, note: string): Command => ({
        slice: 'skill',
        command: { type: 'CreateSkill', data: { name, type: 'text', params: { note } }, metadata: now },
      });
      await runner.run(
        STREAM,
        projectAggregate,
        decision({
          slice: 'project',
          command: { type: 'CreateProject', data: { name: 'gc' }, metadata: now },
        }),
      );
      const commands = Array.from({ length: 16 }, (_, i) =>
        create(`s${i}`, i % 4 === 1 ? 'unstorable' : 'fine'),
      );
      const outcomes = await Promise.all(
        commands.map((c, i) =>
          runner.run(STREAM, projectAggregate, decision(c)).then(
            () => ({ i, ok: true }),
            (e: unknown) => ({ i, ok: false, kind: (e as { kind?: string }).kind, message: String(e) }),
          ),
        ),
      );
      for (const o of outcomes)
        if (o.i % 4 === 1)
          expect(o).toEqual({
            i: o.i,
            ok: false,
            kind: 'Invalid',
            message: expect.stringMatching(/unsupported Unicode/),
          });
        else expect(o).toEqual({ i: o.i, ok: true });
      const names = (await streamOf(opened.log))
        .filter((e) => e.type === 'SkillCreated')
        .map((e) => (e.data as { name: string }).name);
      expect(names.sort()).toEqual(
        commands
          .map((_, i) => `s${i}`)
          .filter((_, i) => i % 4 !== 1)
          .sort(),
      );
    } finally {
      await opened.dispose();
    }
  });
});
