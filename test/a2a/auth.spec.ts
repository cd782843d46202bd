/**
 * Sign-in and roles over A2A, with authentication on: no token is 401 with a bearer challenge, an
 * unknown one 401 with error="invalid_token"; the card names the bearer scheme; and each principal
 * (admin, editor, analyst, auditor, a token scoped to `pa`) may ask an agent exactly as over REST's
 * completions, a refusal appending nothing. Each answer's run is stamped with its caller.
 */
import { storeKinds, type TestApp } from '../support/app';
import type { FakeOpenAi } from '../support/fakeOpenAi';
import { givenHelperAgent, startRoleWorld, type Who } from '../auth/support';
import {
  a2aClient,
  agentUrl,
  asTask,
  bearer,
  listen,
  runEvents,
  TaskState,
  userText,
  type Listening,
} from './support';

const WHO: Who[] = ['admin', 'editor', 'analyst', 'auditor', 'token(pa)'];

/** Who may ask an agent of each project (docs/security.md, as REST's completions). */
const MAY: Record<'pa' | 'pb', Record<Who, 'ok' | 'refused'>> = {
  pa: { admin: 'ok', editor: 'ok', analyst: 'ok', auditor: 'refused', 'token(pa)': 'ok' },
  pb: { admin: 'ok', editor: 'ok', analyst: 'ok', auditor: 'refused', 'token(pa)': 'refused' },
};

describe.each(storeKinds)('A2A sign-in and roles (%s)', (store) => {
  let t: TestApp;
  let l: Listening;
  let fake: FakeOpenAi;
  let tokens: Record<Who, string>;

  beforeAll(async () => {
    let admin: string;
    ({ t, fake, admin, tokens } = await startRoleWorld(store, 'a2a'));
    l = await listen(t);
    for (const p of ['pa', 'pb']) {
      await t.http.post('/api/projects').set('Cookie', admin).send({ name: p }).expect(201);
      await givenHelperAgent(t, admin, p, fake);
    }
  });
  afterAll(async () => {
    await fake?.close();
    await l?.close();
    await t?.dispose();
  });

  it('answers a request without a token 401 with a bearer challenge, an unknown token with invalid_token', async () => {
    const url = agentUrl(l.url, 'pa', 'helper');
    const rpc = { jsonrpc: '2.0', id: 1, method: 'message/send', params: {} };
    for (const request of [
      fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(rpc),
      }),
      fetch(`${url}.well-known/agent-card.json`),
    ]) {
      const res = await request;
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="mindledger"');
    }
    const bad = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...bearer('mdb_not_a_token') },
      body: JSON.stringify(rpc),
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="mindledger", error="invalid_token"');
  });

  it('names the bearer scheme in the card when sign-in is on', async () => {
    const client = await a2aClient(agentUrl(l.url, 'pa', 'helper'), bearer(tokens.analyst));
    const card = await client.getAgentCard();
    expect(card.securitySchemes.bearer?.scheme).toMatchObject({
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'Bearer' },
    });
    expect(Object.keys(card.securityRequirements[0]?.schemes ?? {})).toEqual(['bearer']);
  });

  it('lets each role ask as over REST completions; a refusal appends nothing', async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const project of ['pa', 'pb'] as const)
      for (const who of WHO) {
        expected.push(`${who}@${project}: ${MAY[project][who]}`);
        const question = `role check ${who} ${project}`;
        const before = (await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 })).length;
        let outcome: string;
        try {
          const client = await a2aClient(agentUrl(l.url, project, 'helper'), bearer(tokens[who]));
          const task = asTask(
            await client.sendMessage({
              tenant: '',
              message: userText(question),
              configuration: undefined,
              metadata: undefined,
            }),
          );
          expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
          const started = (await runEvents(t, task.id)).find((e) => e.type === 'AgentRunStarted')!;
          expect(started.meta.actor).toMatch(/^token:/);
          expect(started.data).toMatchObject({ via: 'a2a', project });
          outcome = 'ok';
        } catch (error) {
          expect(String(error)).toMatch(/403/);
          expect((await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 })).length).toBe(before);
          outcome = 'refused';
        }
        outcomes.push(`${who}@${project}: ${outcome}`);
      }
    expect(outcomes).toEqual(expected);
  });

  it('refuses the RPC itself (not only the card) to a caller out of scope: 403, nothing appended', async () => {
    const before = (await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 })).length;
    for (const [who, project] of [
      ['token(pa)', 'pb'],
      ['auditor', 'pa'],
    ] as const) {
      const res = await fetch(agentUrl(l.url, project, 'helper'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...bearer(tokens[who]) },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: { kind: 'message', role: 'user', messageId: 'x', parts: [{ kind: 'text', text: 'hi' }] },
          },
        }),
      });
      expect(res.status).toBe(403);
    }
    expect((await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 })).length).toBe(before);
  });
});
