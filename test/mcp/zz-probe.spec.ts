import { querySql } from '../support/app';
import { givenRentalsModel, rentalRows } from '../support/modelsData';
import { givenLlmModel, closeStandIns } from '../llmModels/world';
import { call, startMcpWorld, textOf } from './support';

it('probe', async () => {
  const w = await startMcpWorld('sqlite');
  try {
    await querySql(w.t, 'CREATE PROJECT pp');
    await givenRentalsModel(w.t, 'pp', rentalRows(40));
    for (const q of ['SELECT * FROM pp.rentals LIMIT 0', 'DESCRIBE pp.rentals.features', 'DESCRIBE pp.rentals'])
      console.log(q, JSON.stringify(await querySql(w.t, q)));
    const llm = await givenLlmModel(w.t);
    for (const q of [`SELECT * FROM ${llm.project}.${llm.model} LIMIT 0`, `DESCRIBE ${llm.project}.${llm.model}.features`])
      console.log(q, JSON.stringify(await querySql(w.t, q)));
    const r = await w.client.callTool({ name: 'ask_agent', arguments: { agent: 'nope', question: 'hi' } }).catch((e) => String(e));
    console.log('ask', JSON.stringify(r));
    const s = await call(w.client, 'search_knowledge_base', { knowledge_base: 'mindsdb.kb', query: 'x' });
    console.log('kb', textOf(s));
    const rows = await querySql(w.t, "SELECT * FROM information_schema.models WHERE name='rentals'");
    console.log(JSON.stringify(rows).slice(0, 3000));
  } finally {
    await closeStandIns();
    await w.dispose();
  }
}, 120000);
