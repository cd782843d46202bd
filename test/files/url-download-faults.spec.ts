/**
 * A file fetched from a URL (`PUT /api/files/:name` with `source_type: url`) is written to disk by
 * one pipeline: when the disk fails (here /dev/full, ENOSPC) the download rejects with the disk's
 * error and both streams end. Before, the file stream's 'error' had no listener (it ended the
 * process) and a write waiting for 'drain' waited for good.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { receiveUrl } from '../../src/files/routes';
import { uploadLog } from '../../src/files/uploadLog';
import { outboundPolicy } from '../../src/http/outbound';

describe('a URL download onto a full disk', () => {
  let server: http.Server;
  let url: string;
  /** Whether the server's answer ended before all of it was sent, once it has ended. */
  let closedEarly: Promise<boolean>;

  beforeAll(async () => {
    // 8 MiB in 64 KiB chunks, more than a write stream buffers before it asks to wait.
    server = http.createServer((_req, res) => {
      closedEarly = new Promise((resolve) => res.on('close', () => resolve(!res.writableFinished)));
      let left = 128;
      const more = () => {
        while (left > 0) {
          left--;
          if (!res.write(Buffer.alloc(64 * 1024, 7))) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big.csv`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('rejects with the disk error, and the source is let go', async () => {
    const log = uploadLog(pino({ level: 'silent' }), { file: 'big', source: 'url', declaredBytes: null });
    const policy = outboundPolicy('127.0.0.1', { localFirst: false });
    await expect(receiveUrl(url, '/dev/full', 64 * 2 ** 20, log, policy)).rejects.toMatchObject({
      code: 'ENOSPC',
    });
    expect(await closedEarly).toBe(true);
  });
});
