import {
  LlmConfigError,
  llmDefaultsFromEnv,
  resolveLlmSettings,
  summarizeLlmSettings,
  SUPPORTED_PROVIDERS,
  type LlmEngine,
} from '../../src/engines/llm';

const configError = async (work: Promise<unknown>): Promise<LlmConfigError> => {
  try {
    await work;
  } catch (error) {
    if (error instanceof LlmConfigError) return error;
    throw error;
  }
  throw new Error('expected a configuration error');
};

const engines: Record<string, LlmEngine> = {
  my_openai: {
    name: 'my_openai',
    handler: 'openai',
    params: { api_key: 'sk-engine', base_url: 'http://gateway.local/v1' },
  },
  local_llama: {
    name: 'local_llama',
    handler: 'ollama',
    params: { ollama_base_url: 'http://gpu-box:11434' },
  },
};
const engineResolver = (name: string) => engines[name.toLowerCase()];

describe('LLM settings from an agent', () => {
  it('reads the v25 shape: model_name and provider on the agent, key and base URL in params', async () => {
    const settings = await resolveLlmSettings({
      modelName: 'gpt-4o',
      provider: 'openai',
      params: { openai_api_key: 'sk-v25', openai_api_base: 'http://proxy.local/v1', temperature: 0.2 },
    });
    expect(settings).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      baseUrl: 'http://proxy.local/v1',
      apiKey: 'sk-v25',
      apiVersion: undefined,
      temperature: 0.2,
      maxTokens: undefined,
      engine: undefined,
    });
  });

  it('reads the v26 shape: a model object in params', async () => {
    const settings = await resolveLlmSettings({
      modelName: null,
      provider: null,
      params: {
        model: {
          model_name: 'llama3.1',
          provider: 'vllm',
          api_key: 'k-v26',
          base_url: 'http://vllm:8000/v1/',
        },
        prompt_template: 'irrelevant here',
      },
    });
    expect(settings).toMatchObject({
      provider: 'vllm',
      model: 'llama3.1',
      baseUrl: 'http://vllm:8000/v1',
      apiKey: 'k-v26',
    });
  });

  it("reads SQL's model='…' string, and lets a query's USING overrides win over everything stored", async () => {
    const stored = { params: { model: 'gpt-4o-mini', provider: 'openai', api_key: 'sk-stored' } };
    expect(await resolveLlmSettings(stored)).toMatchObject({ model: 'gpt-4o-mini', apiKey: 'sk-stored' });
    expect(
      await resolveLlmSettings({
        ...stored,
        overrides: { model: { model_name: 'gpt-4.1', api_key: 'sk-query' }, temperature: '0.5' },
      }),
    ).toMatchObject({ model: 'gpt-4.1', apiKey: 'sk-query', temperature: 0.5 });
  });

  it('falls back to the service defaults (OPENAI_BASE_URL, OPENAI_API_KEY) only for OpenAI-style providers', async () => {
    const defaults = {
      openaiBaseUrl: 'http://fake:1234/v1',
      openaiApiKey: 'sk-default',
      model: 'gpt-default',
    };
    expect(await resolveLlmSettings({ params: {} }, { defaults })).toMatchObject({
      provider: 'openai',
      model: 'gpt-default',
      baseUrl: 'http://fake:1234/v1',
      apiKey: 'sk-default',
    });
    expect(
      await resolveLlmSettings({ modelName: 'llama3', provider: 'ollama', params: {} }, { defaults }),
    ).toMatchObject({
      baseUrl: 'http://localhost:11434/v1',
      apiKey: undefined,
    });
    expect(await resolveLlmSettings({ modelName: 'gpt-4o', provider: 'openai', params: {} })).toMatchObject({
      baseUrl: 'https://api.openai.com/v1',
    });
  });

  it('takes the defaults from an environment given explicitly, never from process.env', () => {
    expect(
      llmDefaultsFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-env' }),
    ).toEqual({
      openaiBaseUrl: 'http://127.0.0.1:9/v1',
      openaiApiKey: 'sk-env',
      model: undefined,
    });
    expect(llmDefaultsFromEnv({ OPENAI_BASE_URL: '', OPENAI_API_KEY: '' })).toEqual({
      openaiBaseUrl: undefined,
      openaiApiKey: undefined,
      model: undefined,
    });
  });

  it("uses a named ML engine's stored parameters, under the agent's own", async () => {
    expect(
      await resolveLlmSettings(
        { modelName: 'gpt-4o', params: { engine: 'my_openai' } },
        { engines: engineResolver },
      ),
    ).toMatchObject({
      provider: 'openai',
      baseUrl: 'http://gateway.local/v1',
      apiKey: 'sk-engine',
      engine: 'my_openai',
    });
    // A provider that names an engine (MindsDB: USING engine=…), and the agent's key winning.
    expect(
      await resolveLlmSettings(
        { modelName: 'llama3.1', provider: 'local_llama', params: { api_key: 'agent-key' } },
        { engines: engineResolver },
      ),
    ).toMatchObject({
      provider: 'ollama',
      baseUrl: 'http://gpu-box:11434/v1',
      apiKey: 'agent-key',
      engine: 'local_llama',
    });
    expect(
      (
        await configError(
          resolveLlmSettings({ modelName: 'x', params: { engine: 'nope' } }, { engines: engineResolver }),
        )
      ).kind,
    ).toBe('unknown_engine');
  });

  it('reaches Anthropic and Google through their OpenAI-compatible endpoints', async () => {
    expect(
      await resolveLlmSettings({
        modelName: 'claude-sonnet-4-5',
        provider: 'anthropic',
        params: { anthropic_api_key: 'a' },
      }),
    ).toMatchObject({ baseUrl: 'https://api.anthropic.com/v1', apiKey: 'a' });
    expect(
      await resolveLlmSettings({
        modelName: 'gemini-2.5-flash',
        provider: 'Google',
        params: { google_api_key: 'g' },
      }),
    ).toMatchObject({
      provider: 'google',
      baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
      apiKey: 'g',
    });
  });

  it('refuses an unknown provider with a typed error naming the supported ones', async () => {
    const error = await configError(resolveLlmSettings({ modelName: 'x', provider: 'writer', params: {} }));
    expect(error.kind).toBe('unsupported_provider');
    expect(error.message).toContain("'writer'");
    for (const p of SUPPORTED_PROVIDERS) expect(error.message).toContain(p);
  });

  it('refuses settings with no model, or a gateway without its address', async () => {
    expect((await configError(resolveLlmSettings({ params: { provider: 'openai' } }))).kind).toBe(
      'missing_model',
    );
    expect(
      (await configError(resolveLlmSettings({ modelName: 'gpt-4o', provider: 'azure_openai', params: {} })))
        .kind,
    ).toBe('missing_base_url');
    expect(
      (
        await configError(
          resolveLlmSettings({ modelName: 'm', provider: 'openai', params: { base_url: 'not a url' } }),
        )
      ).kind,
    ).toBe('missing_base_url');
  });

  it('summarises settings for events without the key or URL credentials', async () => {
    const settings = await resolveLlmSettings({
      modelName: 'gpt-4o',
      params: { api_key: 'sk-secret-value', base_url: 'https://user:pw@gw.local/v1?token=abc' },
    });
    const summary = summarizeLlmSettings(settings);
    expect(summary).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      baseUrl: 'https://gw.local/v1',
      apiKeySet: true,
    });
    expect(JSON.stringify(summary)).not.toMatch(/sk-secret-value|pw@|abc/);
  });
});
