import { querySql, startTestApp } from '../support/app';
import { freshMariaData, freshPostgresData } from '../support/external';

jest.setTimeout(60_000);
test('probe', async () => {
  const my = await freshMariaData(["CREATE TABLE t (id int, d date, ts datetime, f double, b boolean)", "INSERT INTO t VALUES (1,'2024-01-01','2024-01-01 10:00:00', 1.5, true),(2,'2024-01-02','2024-01-02 00:00:00', 2.5, false)"]);
  const pgd = await freshPostgresData(["CREATE TABLE t (id int, d date, ts timestamp, f double precision, b boolean)", "INSERT INTO t VALUES (1,'2024-01-01','2024-01-01 10:00:00', 1.5, true),(2,'2024-01-02','2024-01-02 00:00:00', 2.5, false)"]);
  const app = await startTestApp('sqlite');
  try {
    await querySql(app, `CREATE DATABASE my WITH ENGINE = 'mariadb', PARAMETERS = ${JSON.stringify(my.parameters)}`);
    await querySql(app, `CREATE DATABASE pg WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(pgd.parameters)}`);
    for (const db of ['my', 'pg'])
      for (const w of ["x.d >= DATE '2024-01-02'", "x.ts >= TIMESTAMP '2024-01-01 12:00:00'", 'x.f > 2', 'x.f > 2.0', 'x.b = true', 'x.id = -1 + 3', "x.d = '2024-01-02'", 'x.id <> 1'])
        console.log(db, w, '→', JSON.stringify(await querySql(app, `SELECT x.id FROM ${db}.t x, range(1) r WHERE ${w} ORDER BY 1`)).slice(0, 160));
  } finally {
    await app.dispose();
    await my.drop(); await pgd.drop();
  }
});
