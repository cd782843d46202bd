/** The console's pure rules: statements under the cursor, copies, chart choice, stream parsing. */
import {
  columnKind,
  compareCells,
  fileTableName,
  parseSse,
  pickChart,
  splitStatements,
  statementAt,
  toCsv,
  toJson,
  trainingProgress,
} from '../../console/src/logic';

describe('statements', () => {
  it('splits on semicolons outside quotes and comments', () => {
    expect(
      splitStatements("SELECT ';' AS a; -- x;\nSELECT 2; /* ; */ SHOW TABLES").map((s) => s.sql),
    ).toEqual(["SELECT ';' AS a", '-- x;\nSELECT 2', '/* ; */ SHOW TABLES']);
  });

  it('runs the statement the cursor is in, or the one it follows', () => {
    const text = 'SELECT 1;\nSELECT 2;\n';
    expect(statementAt(text, 3)).toBe('SELECT 1');
    expect(statementAt(text, 9)).toBe('SELECT 1');
    expect(statementAt(text, 12)).toBe('SELECT 2');
    expect(statementAt(text, text.length)).toBe('SELECT 2');
    expect(statementAt('  ', 1)).toBeUndefined();
  });
});

describe('copies', () => {
  it('writes CSV with quoting, JSON as objects', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          ['x,y', null],
          ['say "hi"', 2],
        ],
      ),
    ).toBe('a,b\r\n"x,y",\r\n"say ""hi""",2\r\n');
    expect(JSON.parse(toJson(['a', 'b'], [[1, null]]))).toEqual([{ a: 1, b: null }]);
  });
});

describe('kinds, sorting and charts', () => {
  it('reads kinds from types, else from values', () => {
    expect(columnKind('DOUBLE', ['1'])).toBe('number');
    expect(columnKind('TIMESTAMP', [])).toBe('time');
    expect(columnKind(undefined, ['1', '2.5', null])).toBe('number');
    expect(columnKind('VARCHAR', ['1'])).toBe('text');
  });

  it('sorts numbers as numbers and nulls last', () => {
    expect([10, null, 9, '100'].sort(compareCells)).toEqual([9, 10, '100', null]);
  });

  it('picks bar for text and number, line for time, scatter for two numbers, none without numbers', () => {
    expect(pickChart(['VARCHAR', 'DOUBLE'], [['a', 1]])).toEqual({ kind: 'bar', x: 0, y: 1 });
    expect(pickChart(['DATE', 'INTEGER'], [['2024-01-01', 1]])).toEqual({ kind: 'line', x: 0, y: 1 });
    expect(pickChart(['INTEGER', 'DOUBLE'], [[1, 2]])).toEqual({ kind: 'scatter', x: 0, y: 1 });
    expect(pickChart(['BIGINT'], [[1]])).toEqual({ kind: 'bar', x: null, y: 0 });
    expect(pickChart(['VARCHAR'], [['a']])).toBeNull();
  });
});

describe('streams, names and progress', () => {
  it('parses complete SSE events and keeps the unfinished rest', () => {
    expect(parseSse('data: {"type":"start"}\n\ndata: {"output":"Hi"}\n\ndata: {"ty')).toEqual({
      events: [{ type: 'start' }, { output: 'Hi' }],
      rest: 'data: {"ty',
    });
  });

  it('names a file’s table from its file name', () => {
    expect(fileTableName('Home Rentals (2024).csv')).toBe('home_rentals_2024');
    expect(fileTableName('2024.csv')).toBe('f_2024');
  });

  it('reads training progress from phase columns or a progress column', () => {
    expect(
      trainingProgress({
        STATUS: 'training',
        CURRENT_TRAINING_PHASE: 2,
        TOTAL_TRAINING_PHASES: 4,
        TRAINING_PHASE_NAME: 'fit',
      }),
    ).toEqual({ status: 'training', percent: 50, phase: 'phase 2/4 fit' });
    expect(trainingProgress({ STATUS: 'training', PROGRESS: 40 })).toMatchObject({ percent: 40 });
    expect(trainingProgress({ STATUS: 'complete' })).toMatchObject({ percent: 100 });
  });
});
