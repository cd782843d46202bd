import {
  AgentSetupError,
  buildSystemPrompt,
  formatQueryRows,
  planAgentRun,
  renderPromptTemplate,
  runLimitsFromParams,
  toolsFromSkills,
  type AgentTool,
} from '../../src/engines/agentLoop';
import { memoryKbPort, memorySqlPort, ordersTable } from './memoryPorts';

const sql = memorySqlPort({ orders: ordersTable }, {});
const kb = memoryKbPort({});
const ports = { sql: sql.port, kb: kb.port };
const names = (tools: AgentTool[]) => tools.map((t) => t.name);

const setupError = (work: () => unknown): AgentSetupError => {
  try {
    work();
  } catch (error) {
    if (error instanceof AgentSetupError) return error;
    throw error;
  }
  throw new Error('expected a setup error');
};

describe('tools from skills (MindsDB names)', () => {
  it('gives a sql skill the three text2sql tools with JSON schemas, and text2sql is the same type', () => {
    for (const type of ['sql', 'text2sql', 'TEXT2SQL']) {
      const tools = toolsFromSkills({ skills: [{ name: 's', type, params: { database: 'shop' } }] }, ports);
      expect(names(tools)).toEqual(['sql_db_list_tables', 'sql_db_schema', 'sql_db_query']);
    }
    const [, schema, query] = toolsFromSkills(
      { skills: [{ name: 's', type: 'sql', params: { database: 'shop' } }] },
      ports,
    );
    expect(query?.parameters).toEqual({
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'One SQL statement, without markdown fences' },
      },
      required: ['query'],
      additionalProperties: false,
    });
    expect(query?.description).toContain('the tables of database shop');
    expect(schema?.description).toContain('calling sql_db_list_tables first');
  });

  it('gives knowledge_base and retrieval skills (and "Knowledge Base") a kb_query_tool', () => {
    for (const type of ['knowledge_base', 'retrieval', 'Knowledge Base']) {
      const tools = toolsFromSkills({ skills: [{ name: 'docs', type, params: { source: 'kb1' } }] }, ports);
      expect(names(tools)).toEqual(['kb_query_tool']);
    }
  });

  it("suffixes a tool name with its skill's name when two skills give the same one, and descriptions follow", () => {
    const tools = toolsFromSkills(
      {
        skills: [
          { name: 'sales db', type: 'sql', params: { database: 'sales' } },
          { name: 'hr', type: 'sql', params: { database: 'hr' } },
          { name: 'docs', type: 'retrieval', params: { source: 'kb1' } },
        ],
      },
      ports,
    );
    expect(names(tools)).toEqual([
      'sql_db_list_tables_sales_db',
      'sql_db_schema_sales_db',
      'sql_db_query_sales_db',
      'sql_db_list_tables_hr',
      'sql_db_schema_hr',
      'sql_db_query_hr',
      'kb_query_tool',
    ]);
    expect(tools[1]?.description).toContain('calling sql_db_list_tables_sales_db first');
    expect(tools[5]?.description).toContain('with sql_db_schema_hr before');
  });

  it("builds scopes: the link's tables narrow the skill's, data.tables and data.knowledge_bases become sources", async () => {
    const tools = toolsFromSkills(
      {
        skills: [
          {
            name: 'shop',
            type: 'sql',
            params: { database: 'shop', tables: ['orders', { schema: 'public', table: 'customers' }] },
            linkParameters: { tables: ['orders'] },
          },
        ],
        data: { tables: ['crm.*', 'erp.invoices'], knowledge_bases: ['mindsdb.kb_a', 'kb_b'] },
      },
      ports,
    );
    expect(names(tools)).toEqual([
      'sql_db_list_tables_shop',
      'sql_db_schema_shop',
      'sql_db_query_shop',
      'sql_db_list_tables_data',
      'sql_db_schema_data',
      'sql_db_query_data',
      'kb_query_tool',
    ]);
    const signal = new AbortController().signal;
    await tools[0]!.invoke({}, { signal, maxResultChars: 1000 });
    await tools[3]!.invoke({}, { signal, maxResultChars: 1000 });
    expect(sql.calls.slice(-2).map((c) => c.scope)).toEqual([
      { source: 'shop', database: 'shop', tables: ['orders'] },
      { source: 'data', database: null, tables: ['crm.*', 'erp.invoices'] },
    ]);
    expect(tools[6]?.parameters).toMatchObject({
      properties: { knowledge_base: { enum: ['mindsdb.kb_a', 'kb_b'] } },
      required: ['query', 'knowledge_base'],
    });
  });

  it('refuses skills an agent cannot use, and links that narrow a skill to nothing', () => {
    const unsupported = setupError(() =>
      toolsFromSkills({ skills: [{ name: 'x', type: 'custom', params: {} }] }, ports),
    );
    expect(unsupported.kind).toBe('unsupported_skill');
    expect(unsupported.message).toBe(
      "skill x has type 'custom', which an agent cannot use; supported types: sql, text2sql, knowledge_base, retrieval",
    );
    expect(
      setupError(() =>
        toolsFromSkills(
          {
            skills: [
              {
                name: 's',
                type: 'sql',
                params: { database: 'd', tables: ['a'] },
                linkParameters: { tables: ['b'] },
              },
            ],
          },
          ports,
        ),
      ).kind,
    ).toBe('invalid_skill');
    expect(
      setupError(() => toolsFromSkills({ skills: [{ name: 'k', type: 'retrieval', params: {} }] }, ports))
        .kind,
    ).toBe('invalid_skill');
    expect(
      setupError(() =>
        toolsFromSkills({ skills: [{ name: 'k', type: 'retrieval', params: { source: 'kb' } }] }, {}),
      ).kind,
    ).toBe('missing_port');
  });

  it("accepts a comma-separated table list from the model (as MindsDB's tool took it)", async () => {
    const [, schema] = toolsFromSkills(
      { skills: [{ name: 's', type: 'sql', params: { database: 'shop' } }] },
      ports,
    );
    const out = await schema!.invoke(
      { tables: '`orders`, orders' },
      { signal: new AbortController().signal, maxResultChars: 10_000 },
    );
    expect(sql.calls[sql.calls.length - 1]).toMatchObject({ op: 'describe', arg: ['orders', 'orders'] });
    expect(out.rows).toBe(2);
  });
});

describe('query results for the model', () => {
  it('keeps whole rows under the bound and says how many were left out', () => {
    const text = formatQueryRows(
      {
        columns: ['n', 'big'],
        rows: [
          [1n, 'x'],
          [2n, 'y'],
          [9007199254740993n, 'z'],
        ],
      },
      10_000,
    );
    expect(JSON.parse(text)).toEqual({
      columns: ['n', 'big'],
      rows: [
        [1, 'x'],
        [2, 'y'],
        ['9007199254740993', 'z'],
      ],
      row_count: 3,
    });
    const cut = JSON.parse(
      formatQueryRows({ columns: ['s'], rows: [['a'.repeat(80)], ['b'.repeat(80)]], truncated: true }, 150),
    );
    expect(cut).toEqual({
      columns: ['s'],
      rows: [['a'.repeat(80)]],
      row_count: 2,
      rows_not_shown: 1,
      truncated: true,
    });
  });
});

describe('system prompt', () => {
  it("is the agent's template with {{placeholders}} filled from the question's row, then rules naming its tools", () => {
    const tools = toolsFromSkills(
      {
        skills: [
          { name: 'shop', type: 'sql', params: { database: 'shop' } },
          { name: 'docs', type: 'retrieval', params: { source: 'kb' } },
        ],
      },
      ports,
    );
    const prompt = buildSystemPrompt({
      promptTemplate: 'Answer about {{ city }} shops: {{question}} ({{unknown}})',
      tools,
      row: { question: 'how many?', city: 'Oslo' },
    });
    expect(prompt.split('\n')[0]).toBe('Answer about Oslo shops: how many? ({{unknown}})');
    expect(prompt).toContain(
      'find the tables with `sql_db_list_tables`, read their columns and sample rows with `sql_db_schema`, then run one read-only query at a time with `sql_db_query`.',
    );
    expect(prompt).toContain('search with `kb_query_tool`');
    expect(buildSystemPrompt({ promptTemplate: 'Just chat.', tools: [] })).toBe('Just chat.');
    expect(renderPromptTemplate('{{n}}', { n: 3 })).toBe('3');
  });
});

describe('planning a run from a stored agent', () => {
  it('assembles settings, messages, tools, prompt and limits from the v26 shape with query overrides', async () => {
    const { settings, run } = await planAgentRun({
      agent: {
        modelName: null,
        provider: null,
        params: {
          model: { model_name: 'gpt-4o', provider: 'openai', api_key: 'sk-x' },
          data: { tables: ['shop.orders'] },
          prompt_template: 'You know the shop. Q: {{question}}',
          max_iterations: 4,
        },
        skills: [],
      },
      messages: [{ question: 'how many orders?', answer: null }],
      overrides: { timeout: 30 },
      ports,
      llm: { defaults: { openaiBaseUrl: 'http://127.0.0.1:9/v1' } },
    });
    expect(settings).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o',
      apiKey: 'sk-x',
      baseUrl: 'http://127.0.0.1:9/v1',
    });
    expect(run).toMatchObject({
      model: 'gpt-4o',
      question: 'how many orders?',
      history: [],
      limits: { maxSteps: 4, timeoutMs: 30_000 },
      temperature: 0,
    });
    expect(names([...run.tools])).toEqual(['sql_db_list_tables', 'sql_db_schema', 'sql_db_query']);
    expect(
      run.systemPrompt.startsWith('You know the shop. Q: how many orders?\n\nHow to use your tools:'),
    ).toBe(true);
    expect(runLimitsFromParams({ max_steps: '7', timeout_ms: 1500 })).toEqual({
      maxSteps: 7,
      timeoutMs: 1500,
    });
  });
});
