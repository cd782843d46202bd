/**
 * The console's browser tests: the bundle built when missing or older than its sources, Debian's
 * chromium driven by playwright-core, the app on a real port, screenshots kept as artifacts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { TestApp } from '../support/app';

const root = path.resolve(__dirname, '../..');
export const consoleDist = path.join(root, 'dist/console');
export const artifacts = path.join(root, 'test-artifacts/console');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const newestSource = (dir: string): number =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .reduce(
      (latest, e) =>
        Math.max(
          latest,
          e.isDirectory()
            ? newestSource(path.join(dir, e.name))
            : fs.statSync(path.join(dir, e.name)).mtimeMs,
        ),
      0,
    );

/** Runs `vite build` when dist/console is missing or older than console/ (what `npm run build` does). */
export const ensureConsoleBuilt = () => {
  const index = path.join(consoleDist, 'index.html');
  const built = fs.existsSync(index) ? fs.statSync(index).mtimeMs : 0;
  if (built > newestSource(path.join(root, 'console'))) return;
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'console/vite.config.mts'],
    { cwd: root, stdio: 'inherit' },
  );
};

/** Headless chromium; a clear failure (never a skip) when it is not installed. */
export const launchChromium = async (): Promise<Browser> => {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(
      `The console's browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run does), or set CHROMIUM_PATH.`,
    );
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
};

/** The app listening on a free port of 127.0.0.1. */
export const listen = async (t: TestApp) => {
  const server = http.createServer(t.running.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export const screenshotPath = (name: string) => {
  fs.mkdirSync(artifacts, { recursive: true });
  return path.join(artifacts, `${name}.png`);
};
