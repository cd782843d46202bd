import { DuckDBDataChunk, type DuckDBAppender, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

/** DuckDB's vector size: the most rows a data chunk holds. */
const ROWS_PER_CHUNK = 2048;

/**
 * `rowCount` rows appended a data chunk at a time: each column's cells (`cell(column, row)`) are
 * written into the chunk's vectors in JS, one native call per vector, where an appender's append per
 * value is one native call per cell (and an array value one DuckDB value per item: minutes for a
 * million embeddings). `types` are the chunk's columns, in the table's order; DuckDB casts where the
 * table's type differs (VARCHAR into JSON).
 */
export const appendColumns = (
  appender: DuckDBAppender,
  types: readonly DuckDBType[],
  rowCount: number,
  cell: (column: number, row: number) => DuckDBValue,
) => {
  for (let at = 0; at < rowCount; at += ROWS_PER_CHUNK) {
    const count = Math.min(ROWS_PER_CHUNK, rowCount - at);
    const chunk = DuckDBDataChunk.create([...types], count);
    for (let column = 0; column < types.length; column++) {
      const cells = new Array<DuckDBValue>(count);
      for (let r = 0; r < count; r++) cells[r] = cell(column, at + r);
      chunk.setColumnValues(column, cells);
    }
    appender.appendDataChunk(chunk);
  }
};
