// The baseline: bare express answering the same shape of JSON as GET /api/projects, no work behind it.
import express from 'express';

const body = [{ id: 1, name: 'mindsdb', created_at: '2026-01-01 00:00:00.000000' }];
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/api/projects', (_req, res) => {
  res.json(body);
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
