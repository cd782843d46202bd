/** The console's pure rules: statements under the cursor, copies, chart choice, stream parsing. */
import {
  bandAxisLayout,
  capabilities,
  columnKind,
  compareCells,
  fileTableName,
  formatElapsed,
  formatNumber,
  isChatChannel,
  liveProgress,
  parseServerTime,
  parseSse,
  pickChart,
  splitStatements,
  statementAt,
  timeInterval,
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

describe('numbers, times and layout', () => {
  it('rounds fractions for reading, keeps whole numbers, writes the tiny and the huge with an exponent', () => {
    expect([2299.7504708632114, 0.123456, 12.3456789, 123456.789, 3, -0.5].map(formatNumber)).toEqual([
      '2299.75',
      '0.1235',
      '12.3457',
      '123456.79',
      '3',
      '-0.5',
    ]);
    expect(formatNumber(0.000012345678)).toBe('1.235e-5');
  });

  it('reads the log’s zone-less timestamps as UTC, dates as UTC midnight, zoned ones as written', () => {
    expect(parseServerTime('2026-05-01 12:00:00.123000').toISOString()).toBe('2026-05-01T12:00:00.123Z');
    expect(parseServerTime('2026-11-01').toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(parseServerTime('2026-05-01T12:00:00+02:00').toISOString()).toBe('2026-05-01T10:00:00.000Z');
    expect(formatElapsed(8_400)).toBe('8 s');
    expect(formatElapsed(125_000)).toBe('2 min 05 s');
  });

  it('steps a time axis by the smallest gap', () => {
    const day = (d: string) => Date.parse(d);
    expect(timeInterval([day('2026-11-01'), day('2026-11-02'), day('2026-11-10')])).toBe('day');
    expect(timeInterval([day('2026-01-01'), day('2026-02-01')])).toBe('month');
    expect(timeInterval([day('2026-01-01T10:00:00Z'), day('2026-01-01T11:00:00Z')])).toBe('hour');
  });

  it('keeps short labels level and turns long ones, with room below and on the left, thinned when crowded', () => {
    expect(bandAxisLayout(['a', 'b'], 800)).toMatchObject({ rotate: 0, every: 1 });
    const turned = bandAxisLayout(['a_really_long_neighborhood_name', 'x', 'y', 'z', 'w', 'v'], 500);
    expect(turned.rotate).toBe(-45);
    expect(turned.marginBottom).toBeGreaterThan(28 * 6.2 * Math.SQRT1_2);
    expect(turned.marginLeft).toBeGreaterThan(60);
    expect(
      bandAxisLayout(
        Array.from({ length: 200 }, (_, i) => `label_${i}`),
        1000,
      ).every,
    ).toBeGreaterThan(1);
  });
});

describe('roles, channels and live training', () => {
  it('offers each role what the server lets it do', () => {
    expect(capabilities(null)).toEqual({ upload: true, chat: true, query: true });
    expect(capabilities('editor')).toEqual({ upload: true, chat: true, query: true });
    expect(capabilities('analyst')).toEqual({ upload: false, chat: true, query: true });
    expect(capabilities('auditor')).toEqual({ upload: false, chat: false, query: false });
  });

  it('knows chat channels from databases', () => {
    expect(['telegram', 'Slack', 'webhook', 'postgres'].map(isChatChannel)).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  it('moves a training’s row on by the log’s newest report, never back, with the time since it began', () => {
    const row = {
      STATUS: 'training',
      CURRENT_TRAINING_PHASE: 2,
      TOTAL_TRAINING_PHASES: 5,
      TRAINING_PHASE_NAME: 'Reading data',
      PROGRESS: 0,
    };
    expect(liveProgress(row, { phase: 'training', percent: 42 }, 1_000, 4_500)).toEqual({
      status: 'training',
      percent: 42,
      phase: 'phase 4/5 Training',
      elapsed: '3 s',
    });
    expect(liveProgress({ ...row, PROGRESS: 60 }, { phase: 'encoding', percent: 10 }, null, 0)).toMatchObject(
      {
        percent: 60,
        elapsed: null,
      },
    );
    expect(liveProgress({ STATUS: 'complete' }, { phase: 'calibrating', percent: 92 }, 0, 9_000)).toEqual({
      status: 'complete',
      percent: 100,
      phase: null,
      elapsed: null,
    });
  });
});
