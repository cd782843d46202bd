/**
 * One rule for what may stand where a FROM clause names a relation or its alias (src/shared/sqlTokens.ts
 * `isRelationName`), read by the replay's table references, the PostgreSQL door's FROM functions and
 * a trigger's TABLE_DELTA: a quoted identifier, or a word no clause or join begins with.
 */
import { tableRefsOf } from '../../src/agentRuns/asOfSql';
import { isRelationName, significant, tokenize } from '../../src/shared/sqlTokens';

const wordsOf = (sql: string) => significant(tokenize(sql, 'mysql'));

describe('isRelationName', () => {
  it('given the keywords that may follow a relation, when read, then none is a name; other words and quoted names are', () => {
    const sql =
      'WHERE GROUP HAVING ORDER LIMIT OFFSET FETCH UNION EXCEPT INTERSECT WINDOW QUALIFY SELECT FOR ' +
      'join inner outer left right full cross natural lateral on using with';
    for (const t of wordsOf(sql)) expect(isRelationName(sql, t)).toBe(false);
    const names = 'orders o `where` `join` t1';
    expect(wordsOf(names).map((t) => isRelationName(names, t))).toEqual([true, true, true, true, true]);
    expect(isRelationName(names, undefined)).toBe(false);
  });
});

describe("the replay's table references", () => {
  it('given FROM a table, LATERAL (…), when read, then only the table is a reference (LATERAL is no table)', () => {
    const refs = tableRefsOf('SELECT * FROM shop.orders o, LATERAL (SELECT 1) AS x WHERE o.id > 0');
    expect(refs.map((r) => [r.database, r.table])).toEqual([['shop', 'orders']]);
  });

  it('given joins with and without aliases, when read, then each table is found once, no keyword taken for one', () => {
    const refs = tableRefsOf(
      'SELECT * FROM a LEFT OUTER JOIN b ON a.id = b.id JOIN files.c AS c USING (id) ORDER BY 1 FOR UPDATE',
    );
    expect(refs.map((r) => [r.database, r.table])).toEqual([
      [null, 'a'],
      [null, 'b'],
      ['files', 'c'],
    ]);
  });
});
