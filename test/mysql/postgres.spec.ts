import type mysql from 'mysql2/promise';
import { querySql } from '../support/app';
import { startFront, type Front } from './support';

describe('MySQL protocol on the PostgreSQL store (smoke)', () => {
  let front: Front;

  beforeAll(async () => {
    front = await startFront({ kind: 'postgres' });
  });
  afterAll(() => front.dispose());

  it('runs a MindsDB statement and reads its effect back, as the HTTP endpoint does', async () => {
    const c = await front.connect({ database: 'mindsdb' });
    await c.query('CREATE PROJECT over_mysql');
    await c.query('USE over_mysql');
    const [tables] = await c.query<mysql.RowDataPacket[]>('SHOW TABLES');
    expect(tables.map((r) => r.Tables_in_over_mysql)).toContain('skills');
    const [rows] = await c.execute<mysql.RowDataPacket[]>(
      "SELECT NAME, TYPE FROM information_schema.DATABASES WHERE NAME = ? AND TYPE = 'project'",
      ['over_mysql'],
    );
    expect(rows).toEqual([{ NAME: 'over_mysql', TYPE: 'project' }]);
    const http = await querySql(
      front.app,
      "SELECT NAME FROM information_schema.DATABASES WHERE NAME = 'over_mysql'",
    );
    expect(http.data).toEqual([['over_mysql']]);
    await expect(c.query('CREATE PROJECT over_mysql')).rejects.toMatchObject({
      errno: http.error_code ?? 1062,
    });
  });
});
