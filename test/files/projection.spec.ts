import type { FileUploaded } from '../../events';
import { projected } from '../support/projection';

const at = '2026-03-04T05:06:07.089Z';
const uploaded = (name: string, digest: string): FileUploaded => ({
  type: 'FileUploaded',
  data: {
    name,
    originalName: `${name}.csv`,
    digest,
    size: 10,
    format: 'csv',
    csv: { delimiter: ',', quote: '"', escape: '"', header: true },
    columns: [{ name: 'a', type: 'BIGINT' }],
    rowCount: 2,
    uploadedAt: at,
  },
});

describe('files table', () => {
  it('holds one row per file name (case-insensitive), the latest upload winning', async () => {
    const table = await projected([
      uploaded('Sales', 'a'.repeat(64)),
      uploaded('sales', 'b'.repeat(64)),
      uploaded('gone', 'c'.repeat(64)),
      { type: 'FileDeleted', data: { name: 'gone', deletedAt: at } },
    ]);
    expect(table('files')).toEqual([
      expect.objectContaining({
        KEY: 'sales',
        NAME: 'sales',
        DIGEST: 'b'.repeat(64),
        ROW_COUNT: 2n,
        VERSION: 2n,
      }),
    ]);
  });
});
