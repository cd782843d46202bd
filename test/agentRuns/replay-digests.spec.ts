/**
 * A replay that says what it could not compare (issue 61, item 5). Every SQL tool result is
 * recorded with a digest of its rows and values (src/engines/agentLoop/resultDigest.ts), not only its row
 * count: an uploaded file keeps no history, so a replay compares today's answer with that digest —
 * a count that went from 4 to 5 is a changed step, though both answers have one row. A run recorded
 * before digests is "not comparable", never "unchanged"; the reason names why (uploaded files keep
 * no history), not "Database files does not exist".
 */
import type { NewEvent } from '../../src/eventlog/types';
import { startTestApp, type TestApp } from '../support/app';
import type { FakeOpenAi } from '../support/fakeOpenAi';
import { askWithQuery, eventsOf, givenAgentWithSql, replayOf, unique, type AgentWorld } from './support';

type DigestReplay = Awaited<ReturnType<typeof replayOf>> & { not_comparable_steps: number[] };
type ToolReplay = {
  compared: string;
  reason?: string;
  differs?: boolean;
  recorded_digest?: string;
  now?: { rows?: number; digest?: string };
};

describe('agent run replay: result digests', () => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    await t.dispose();
  });
  const world = async (file: string): Promise<AgentWorld> => {
    const w = await givenAgentWithSql(t, { database: 'files', tables: [file] });
    fakes.push(w.fake);
    return w;
  };
  const upload = (file: string, cities: string[]) =>
    t.http
      .put(`/api/files/${file}`)
      .attach(
        'file',
        Buffer.from(`id,name\n${cities.map((c, i) => `${i + 1},${c}`).join('\n')}\n`),
        `${file}.csv`,
      )
      .expect(200);
  const replay = async (w: AgentWorld, traceId: string) => {
    const r = (await replayOf(t, w, traceId)) as DigestReplay;
    const tool = r.steps.find((s) => s.kind === 'tool')!;
    return { r, tool, how: tool.replay as ToolReplay };
  };

  it('records a digest of each SQL result', async () => {
    const file = unique('cities');
    await upload(file, ['Oslo', 'Lima']);
    const w = await world(file);
    const traceId = await askWithQuery(t, w, 'How many?', `SELECT count(*) AS n FROM files.${file}`, '2');
    const [called] = (await eventsOf(t, `agent-run-${traceId}`)).filter(
      (e) => e.type === 'AgentRunToolCalled',
    );
    expect(called!.data.resultDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(called!.data.rows).toBe(1);
  });

  it('a count over an uploaded file that went from 4 to 5 is a changed step, though both answers are one row', async () => {
    const file = unique('cities');
    await upload(file, ['Oslo', 'Lima', 'Pune', 'Kobe']);
    const w = await world(file);
    const traceId = await askWithQuery(
      t,
      w,
      'How many cities?',
      `SELECT count(*) AS n FROM files.${file}`,
      '4',
    );

    const same = await replay(w, traceId);
    expect(same.how).toMatchObject({ compared: 'digest', differs: false, now: { rows: 1 } });
    expect(same.how.reason).toMatch(/uploaded files keep no history/);
    expect(same.how.reason).not.toMatch(/does not exist/);
    expect(same.r).toMatchObject({ unchanged: true, changed_steps: [], not_comparable_steps: [] });

    await upload(file, ['Oslo', 'Lima', 'Pune', 'Kobe', 'Graz']);
    const changed = await replay(w, traceId);
    expect(changed.how).toMatchObject({ compared: 'digest', differs: true, now: { rows: 1 } });
    expect(changed.how.now!.digest).not.toBe(changed.how.recorded_digest);
    expect(changed.r.unchanged).toBe(false);
    expect(changed.r.changed_steps).toEqual([changed.tool.seq]);

    // The same rows again: the digest matches once more.
    await upload(file, ['Oslo', 'Lima', 'Pune', 'Kobe']);
    expect((await replay(w, traceId)).r).toMatchObject({ unchanged: true, changed_steps: [] });
  });

  it('a value that changed, with the row count the same, is a changed step', async () => {
    const file = unique('cities');
    await upload(file, ['Oslo', 'Lima']);
    const w = await world(file);
    const traceId = await askWithQuery(
      t,
      w,
      'Which?',
      `SELECT name FROM files.${file} ORDER BY id`,
      'Oslo, Lima',
    );
    await upload(file, ['Oslo', 'Bern']);
    const { r, how } = await replay(w, traceId);
    expect(how).toMatchObject({ compared: 'digest', differs: true, now: { rows: 2 } });
    expect(r.unchanged).toBe(false);
  });

  it('a run recorded before digests is not comparable, never unchanged', async () => {
    const file = unique('cities');
    await upload(file, ['Oslo', 'Lima', 'Pune', 'Kobe']);
    const w = await world(file);
    const traceId = await askWithQuery(t, w, 'How many?', `SELECT count(*) AS n FROM files.${file}`, '4');
    // The same run as a release before digests recorded it: its events copied to a new trace, the
    // tool call without its digest.
    const old = `${traceId}-old`;
    const copied = (await eventsOf(t, `agent-run-${traceId}`)).map((e) => {
      const { resultDigest: _dropped, ...data } = e.data;
      return { type: e.type, data: { ...data, traceId: old } } as unknown as NewEvent;
    });
    await t.running.ctx.log.append(`agent-run-${old}`, copied, 0n);
    const { r, how } = await replay(w, old);
    expect(how.compared).toBe('not_comparable');
    expect(how.reason).toMatch(/^not comparable: recorded before result digests/);
    expect(how.reason).toMatch(/uploaded files keep no history/);
    expect(r.unchanged).toBe(false);
    expect(r.changed_steps).toEqual([]);
    expect(r.not_comparable_steps).toEqual([r.steps.find((s) => s.kind === 'tool')!.seq]);
  });
});
