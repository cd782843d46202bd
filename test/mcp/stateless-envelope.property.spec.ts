/**
 * A stateless request (revision 2026-07-28) names its client in its `_meta` envelope, on every
 * request, and the record of each call keeps it: a new input from the client, generated hostile
 * (fast-check, a fresh seed each run, bounded runs). Whatever name and version the client gives
 * (full Unicode, lone surrogates, NUL, empty, huge), the call is answered, never a 500, and
 * recorded with the client as `eventText` keeps text in the log (well-formed, no NUL, bounded).
 *
 * Kill check: a recorder that kept the client as sent would differ from the record for inputs the
 * property generates at this count (the comparison below finds them).
 */
import fc from 'fast-check';
import { eventText } from '../../src/mcp/present';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { hostileStrings, withLoneSurrogate } from '../support/hostile';
import { propertyRuns, propertySeed } from '../support/seed';
import { eventAt, listen, receiptOf, rowsOf, type Listening } from './support';
import { callStateless, STATELESS_REVISION, statelessClient } from './statelessClient';

const SEED = propertySeed();
const RUNS = 15;

/** What a client may call itself. */
const clientText = withLoneSurrogate(hostileStrings(['mcp', 'client', '1.0.0'], 70_000));

/** The client as the record keeps it. */
const kept = (name: string, version: string) => ({
  name: eventText(name, 256),
  version: eventText(version, 256),
});

describe.each(storeKinds)("MCP stateless envelope's client, hostile (%s)", (store) => {
  let t: TestApp;
  let l: Listening;

  beforeAll(async () => {
    t = await startTestApp(store);
    l = await listen(t);
  });
  afterAll(async () => {
    await l?.close();
    await t?.dispose();
  });

  it('given any client name and version in the envelope, when a stateless call is made, then it is answered (never a 500) and recorded with the client as eventText keeps it', async () => {
    await fc.assert(
      fc.asyncProperty(clientText, clientText, async (name, version) => {
        const c = await statelessClient([l.url], { info: { name, version } });
        try {
          const answer = await callStateless(c, 'query', { query: 'SELECT 1 AS one' });
          expect(rowsOf(answer)).toEqual([{ one: 1 }]);
          const record = await eventAt(t, receiptOf(answer).position);
          expect(record.type).toBe('McpCallRecorded');
          expect(record.data).toMatchObject({
            protocolVersion: STATELESS_REVISION,
            client: kept(name, version),
          });
          expect(c.served.map((s) => s.status)).toEqual([200, 200]);
        } finally {
          await c.client.close();
        }
      }),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    // The log still takes writes and its read model still reads.
    const after = await statelessClient([l.url]);
    expect(rowsOf(await callStateless(after, 'query', { query: 'SELECT 2 AS two' }))).toEqual([{ two: 2 }]);
    await after.client.close();
  });

  it('kill check: a recorder keeping the client as sent differs from the record for generated inputs', () => {
    let caught = 0;
    fc.assert(
      fc.property(clientText, clientText, (name, version) => {
        const asSent = { name, version };
        if (JSON.stringify(asSent) !== JSON.stringify(kept(name, version))) caught++;
      }),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    expect(caught).toBeGreaterThan(0);
  });
});
