/**
 * The signer never signs a tree its witness contradicts. A log cut below witnessed checkpoints,
 * with the cut events' checkpoints and their streams' rows deleted too, leaves the checkpoint
 * stream without a conflict (StreamTampered does not see it), and the read model, rebuilt from the
 * shortened log, holds the shortened tree. An event edited in place gives a rebuilt read model a
 * tree of the witnessed size or more whose first leaves no longer hash to the witnessed root. Before
 * signing, the tree must be at least the latest witnessed size and consistent with it (its first
 * leaves hash to the witnessed root); when it is not, the signer says so once and signs no more in
 * that process, while `verify` still reports what changed. A witness that cannot be read holds
 * signing back until it can be, without a restart.
 */
import fs from 'node:fs';
import { storeKinds, type StoreKind, type TestApp } from '../support/app';
import { logLines } from '../support/logLines';
import { until } from '../support/until';
import { givenProject } from '../support/world';
import { expectSigningRefused, loggedEvents, onLogStore, signingApp } from './logStore';

type LogLine = { level: number; msg: string; witnessedSize?: number; treeSize?: number };
type Witnessed = { tree_size: number; root_hash: string };

const CONTRADICTED = /^ledger: the witness contradicts the tree/;

const witnessLines = (t: TestApp): Witnessed[] =>
  fs
    .readFileSync(`${t.config.ledger.witnessDir}/checkpoints.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Witnessed);

/** The log after its last events: every event after `position` gone, and its streams' rows with them. */
const cutAfter = (position: number) => `
  DELETE FROM emt_messages WHERE global_position > ${position};
  DELETE FROM emt_streams WHERE stream_id NOT IN (SELECT stream_id FROM emt_messages);
  UPDATE emt_streams SET stream_position =
    (SELECT MAX(m.stream_position) FROM emt_messages m WHERE m.stream_id = emt_streams.stream_id);`;

const editAt = (store: StoreKind, position: number) => {
  const [text, json] = store === 'postgres' ? ['::text', '::jsonb'] : ['', ''];
  return `UPDATE emt_messages SET message_data = replace(message_data${text}, 'proj', 'PROJ')${json}
    WHERE global_position = ${position}`;
};

describe.each(storeKinds)('the checkpoint signer and its witness (%s)', (store) => {
  let t: TestApp;
  const { stream: logStream, lines } = logLines<LogLine>();
  beforeEach(async () => {
    lines.length = 0;
    t = await signingApp(store, logStream);
  });
  afterEach(() => t.dispose());

  /** Three projects, each signed (and so witnessed), the node stopped: the projects' positions. */
  const givenWitnessedHistory = async () => {
    const ledger = t.running.services.ledger;
    for (let i = 0; i < 3; i++) {
      await givenProject(t);
      await ledger.checkpoint(true);
    }
    await t.stop();
    return (await loggedEvents(t)).filter((e) => e.type === 'ProjectCreated').map((e) => Number(e.position));
  };

  type Tampering = {
    readonly tamper: (created: number[]) => Promise<void>;
    /** What the signer says of the tree, and the problem `verify` names. */
    readonly said: RegExp;
    readonly problem: string;
  };
  const TAMPERINGS: Record<string, Tampering> = {
    'the last events cut, with their checkpoints and their streams’ rows': {
      tamper: (created) => onLogStore(store, t, cutAfter(created[0]!)),
      said: /the tree to sign has \d+ leaves, \d+ fewer: the log was truncated after the witness saw it/,
      problem: 'checkpoint-missing',
    },
    'an event edited (and the read model rebuilt from the log)': {
      tamper: async (created) => {
        await onLogStore(store, t, editAt(store, created[1]!));
        for (const file of [t.config.duckdbFile, `${t.config.duckdbFile}.wal`])
          fs.rmSync(file, { force: true });
      },
      said: /whose first \d+ leaves do not hash to that root: the log was changed/,
      problem: 'root-mismatch',
    },
  };

  it.each(Object.keys(TAMPERINGS))(
    'given %s, when the restarted service ticks and is told to sign, then it signs nothing and says so once',
    async (tampering) => {
      const created = await givenWitnessedHistory();
      const witnessed = witnessLines(t).at(-1)!;
      expect(witnessed.tree_size).toBeGreaterThan(0);
      const { tamper, said, problem } = TAMPERINGS[tampering]!;
      await tamper(created);
      const kept = (await loggedEvents(t)).filter((e) => e.type === 'LedgerCheckpointSigned');

      const from = lines.length;
      t = await t.restart();
      const own = () => lines.slice(from);
      await expectSigningRefused(t, own, CONTRADICTED, problem);
      await t.stop();

      const refusals = own().filter((l) => CONTRADICTED.test(l.msg));
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toMatchObject({ level: 50, witnessedSize: witnessed.tree_size });
      expect(refusals[0]!.msg).toContain(`tree size ${witnessed.tree_size} (root ${witnessed.root_hash})`);
      expect(refusals[0]!.msg).toMatch(said);
      expect(own().filter((l) => /ledger checkpoint/.test(l.msg))).toEqual([]);
      // No checkpoint over the contradicted tree: the log holds those left after the tampering.
      const signed = (await loggedEvents(t)).filter((e) => e.type === 'LedgerCheckpointSigned');
      expect(signed.map((e) => e.position)).toEqual(kept.map((e) => e.position));
      // Nor was the witness told of one.
      expect(witnessLines(t).at(-1)).toEqual(expect.objectContaining(witnessed));
    },
    60_000,
  );

  it('given a witness file that cannot be read, when a checkpoint is due, then nothing is signed and it warns; once it reads again, the next tick signs', async () => {
    await givenWitnessedHistory();
    const file = `${t.config.ledger.witnessDir}/checkpoints.jsonl`;
    const before = witnessLines(t);
    // A directory where the file should be: reading it fails (EISDIR), as an unreadable disk would.
    fs.renameSync(file, `${file}.aside`);
    fs.mkdirSync(file);
    const from = lines.length;
    t = await t.restart();
    const own = () => lines.slice(from);
    await givenProject(t);
    await until('the signer to warn that it could not sign', async () =>
      own().some((l) => l.msg === 'ledger checkpoint not signed') ? true : undefined,
    );
    const signedBefore = (await loggedEvents(t)).filter((e) => e.type === 'LedgerCheckpointSigned');
    expect(signedBefore).toHaveLength(before.length);

    fs.rmdirSync(file);
    fs.renameSync(`${file}.aside`, file);
    await until('the next tick to sign', async () =>
      (await loggedEvents(t)).filter((e) => e.type === 'LedgerCheckpointSigned').length > before.length
        ? true
        : undefined,
    );
    // Signed over the witnessed tree (it extends it), witnessed, and nothing refused.
    expect(witnessLines(t)).toHaveLength(before.length + 1);
    expect(own().filter((l) => CONTRADICTED.test(l.msg))).toEqual([]);
  }, 60_000);
});
