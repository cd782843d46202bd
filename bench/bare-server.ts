// The baselines: bare express answering the same shapes of JSON as our routes, no work behind them.
// GET /api/projects for the REST bench; POST /api/sql/query (its JSON body parsed, as every POST's
// must be) for the SQL bench, whose goal in issue 41 is "vs bare express POST".
import express from 'express';

const projects = [{ id: 1, name: 'mindsdb', created_at: '2026-01-01 00:00:00.000000' }];
const selectOne = {
  type: 'table',
  column_names: ['1'],
  column_types: ['INTEGER'],
  data: [[1]],
  context: { db: 'mindsdb' },
};
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/api/projects', (_req, res) => {
  res.json(projects);
});
app.post('/api/sql/query', express.json(), (req, res) => {
  if (typeof (req.body as { query?: unknown }).query !== 'string') res.status(400).end();
  else res.json(selectOne);
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
