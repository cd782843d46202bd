import fc from 'fast-check';
import { AgentRunError, runAgent, toolsFromSkills, type AgentRunEvent } from '../../src/engines/agentLoop';
import { createLlmClient, LlmError, resolveLlmSettings, type LlmClient } from '../../src/engines/llm';
import { fakeReply, startFakeOpenAi, type FakeOpenAi, type FakeReply } from '../support/fakeOpenAi';
import { memorySqlPort, ordersTable } from './memoryPorts';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

/**
 * Promise: an agent's API key reaches the provider as `Authorization: Bearer <key>` and nowhere
 * else we produce: not in any step event, not in any error, whatever the provider answers (even a
 * provider that quotes the key back in its error text).
 * Beside it, a kill check: a client whose errors keep the request they failed on (its Authorization
 * header, as axios's errors do) is caught at the count `npm test` runs.
 */
describe('API keys never leave through events or errors (property)', () => {
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterAll(() => fake.close());

  const outcomes = (key: string): Record<string, FakeReply[]> => ({
    answer: [fakeReply.toolCall('sql_db_list_tables', {}), fakeReply.text('There are tables.')],
    invalidKey: [fakeReply.invalidKey(key)],
    forbiddenQuotingKey: [fakeReply.error(403, `key ${key} may not use this model`)],
    badRequestQuotingKey: [fakeReply.error(400, `Invalid header: Authorization: Bearer ${key}`)],
    serverErrorQuotingKey: [fakeReply.error(500, `upstream rejected api_key=${key}`)],
    unknownModelQuotingKey: [fakeReply.error(404, `model not found for ${key}`)],
    rateLimitedQuotingKey: [fakeReply.error(429, `slow down ${key}`, { headers: { 'retry-after': '999' } })],
  });

  /** What a run draws: a key, the field holding it, what the provider answers, streamed or not. */
  const runs = fc.tuple(
    fc.stringMatching(/^(sk-|sk-proj-|)[A-Za-z0-9_-]{16,48}$/),
    fc.constantFrom('api_key', 'openai_api_key', 'model.api_key'),
    fc.constantFrom(...Object.keys(outcomes('x'))),
    fc.boolean(),
  );

  /** One run, the LLM client made by `makeClient`. */
  const keyStaysHome = async (
    [key, field, outcome, stream]: [string, string, string, boolean],
    makeClient: typeof createLlmClient,
  ) => {
    fake.reset();
    fake.conversation(outcomes(key)[outcome]!);
    const params: Record<string, unknown> =
      field === 'model.api_key'
        ? {
            model: {
              model_name: 'fake-model',
              provider: 'openai',
              api_key: key,
              base_url: fake.baseUrl,
            },
          }
        : { [field]: key, base_url: fake.baseUrl };
    const settings = await resolveLlmSettings({ modelName: 'fake-model', provider: 'openai', params });
    const llm = makeClient(settings, {
      retry: { maxRetries: 1, baseDelayMs: 1, maxRetryAfterMs: 10 },
    });
    const sql = memorySqlPort({ orders: ordersTable }, {});
    const events: AgentRunEvent[] = [];
    let thrown: unknown;
    try {
      await runAgent({
        llm,
        model: settings.model,
        systemPrompt: 'You answer questions.',
        history: [],
        question: 'Which tables are there?',
        tools: toolsFromSkills(
          { skills: [{ name: 's', type: 'sql', params: { database: 'shop' } }] },
          { sql: sql.port },
        ),
        onEvent: (e) => {
          events.push(e);
        },
        ...(stream ? { onTextDelta: () => undefined } : {}),
      });
    } catch (error) {
      thrown = error;
    }

    expect(fake.requests()[0]?.headers.authorization).toBe(`Bearer ${key}`);
    expect(JSON.stringify(events)).not.toContain(key);
    if (outcome === 'answer') expect(thrown).toBeUndefined();
    else {
      expect(thrown).toBeInstanceOf(AgentRunError);
      const error = thrown as AgentRunError;
      expect(`${error.message} ${String(error.stack)}`).not.toContain(key);
    }
    // The client's own errors, seen directly.
    fake.reset();
    fake.enqueue(...outcomes(key)[outcome]!.filter((r) => r.type === 'error'));
    if (outcome !== 'answer') {
      const direct = await llm.chat({ model: 'fake-model', messages: [{ role: 'user', content: 'x' }] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(direct).toBeInstanceOf(LlmError);
      expect(
        JSON.stringify({ ...(direct as LlmError), message: (direct as LlmError).message }),
      ).not.toContain(key);
    }
  };

  it('holds for generated keys, key fields and provider answers', async () => {
    await fc.assert(
      fc.asyncProperty(runs, (run) => keyStaysHome(run, createLlmClient)),
      { seed: propertySeed(), numRuns: propertyRuns(40) },
    );
  });

  it('kill check: a client whose errors keep the request they failed on (its Authorization header) is caught', async () => {
    const keepingTheRequest: typeof createLlmClient = (settings, options) => {
      const llm: LlmClient = createLlmClient(settings, options);
      const withRequest = (error: unknown): never => {
        if (error instanceof LlmError)
          Object.assign(error, {
            request: { url: settings.baseUrl, headers: { authorization: `Bearer ${settings.apiKey}` } },
          });
        throw error;
      };
      return { ...llm, chat: (request) => llm.chat(request).catch(withRequest) };
    };
    await expectCaught(
      fc.asyncProperty(runs, (run) => keyStaysHome(run, keepingTheRequest)),
      { seed: propertySeed(), numRuns: propertyRuns(40) },
    );
  });
});
