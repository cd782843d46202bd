import { addModelJoinConditions } from '../../src/sql/faces/model/modelJoins';
import { takePredictOptions } from '../../src/sql/faces/model/predictOptions';

// The text rewrites before DuckDB parses a prediction query: conditions for joins with models,
// and the closing USING of prediction options taken off.
describe('join conditions for models', () => {
  const isModel = async (_schema: string | null, table: string) => table === 'm';

  it('adds ON TRUE after a joined model version (project.model."3"), as the SDK writes it', async () => {
    expect(
      await addModelJoinConditions('SELECT * FROM "files"."t" AS t JOIN "p"."m"."1" AS m LIMIT 5', isModel),
    ).toBe('SELECT * FROM "files"."t" AS t JOIN "p"."m"."1" AS m ON TRUE LIMIT 5');
  });

  it('adds ON TRUE after a table joined to a model that comes first in FROM', async () => {
    expect(
      await addModelJoinConditions('SELECT * FROM p.m."2" AS m JOIN files.t AS t WHERE t.a > 1', isModel),
    ).toBe('SELECT * FROM p.m."2" AS m JOIN files.t AS t ON TRUE WHERE t.a > 1');
  });

  it('leaves joins with a condition, and joins of no model, alone', async () => {
    const text = 'SELECT * FROM files.t AS t JOIN p.m.x AS m JOIN u ON u.a = t.a JOIN p.m AS k USING (a)';
    expect(await addModelJoinConditions(text, isModel)).toBe(text);
    const plain = 'SELECT * FROM a JOIN b ON a.x = b.x';
    expect(await addModelJoinConditions(plain, isModel)).toBe(plain);
  });
});

describe('prediction options in a closing USING', () => {
  it('are taken off the text, their values read', () => {
    expect(takePredictOptions('SELECT * FROM p.m WHERE a = 1 USING fixed_confidence = 0.8')).toEqual({
      sql: 'SELECT * FROM p.m WHERE a = 1',
      options: { fixed_confidence: 0.8 },
    });
    expect(takePredictOptions("SELECT * FROM t JOIN p.m AS m USING `FIXED_CONFIDENCE` = '0.5';")).toEqual({
      sql: 'SELECT * FROM t JOIN p.m AS m',
      options: { fixed_confidence: 0.5 },
    });
  });

  it('are not confused with a join’s USING (columns) or a string', () => {
    for (const text of ["SELECT * FROM a JOIN b USING (x) WHERE y = 'USING z = 1'", 'SELECT 1'])
      expect(takePredictOptions(text)).toEqual({ sql: text, options: null });
  });

  it('refuses options it does not know, naming each, and values out of range', () => {
    expect(() => takePredictOptions('SELECT * FROM p.m USING predict_proba = true, colour = "red"')).toThrow(
      /predict_proba, colour/,
    );
    expect(() => takePredictOptions('SELECT * FROM p.m USING fixed_confidence = 0')).toThrow(
      /fixed_confidence/,
    );
    expect(() => takePredictOptions('SELECT * FROM p.m USING fixed_confidence = 0.5, ')).toThrow(
      /expected name = value/,
    );
  });
});
