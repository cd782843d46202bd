/**
 * The console's browser tests: the bundle built when missing or older than its sources, Debian's
 * chromium driven by playwright-core, the app on a real port, screenshots kept as artifacts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import type { TestApp } from '../support/app';
import { untilTrue } from '../support/until';

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

/**
 * One page a spec file's tests take in turn, as a browser of their own each: every call leaves
 * nothing of the test before it (its page, listeners, routes, cookies, storage, permissions). A new
 * browser context for each test made Chromium start a renderer and compile the console's bundle
 * again: about 1.5 s of CPU a test. `contexts` collects the context made, for the file to close.
 */
export const pageReuser = (browser: Browser, contexts: BrowserContext[], appUrl: string) => {
  let reused: Page | null = null;
  return async (viewport = { width: 1400, height: 900 }, permissions: string[] = []) => {
    if (!reused) {
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      reused = await context.newPage();
    } else {
      if (reused.url().startsWith(appUrl)) await reused.evaluate('localStorage.clear()');
      // Away from the console first: nothing the earlier test's page does reaches the next one.
      await reused.goto('about:blank');
      reused.removeAllListeners('response');
      reused.removeAllListeners('pageerror');
      await reused.unrouteAll();
      await reused.setViewportSize(viewport);
      await reused.context().clearCookies();
      await reused.context().clearPermissions();
    }
    if (permissions.length > 0) await reused.context().grantPermissions(permissions);
    return reused;
  };
};

export const screenshotPath = (name: string) => {
  fs.mkdirSync(artifacts, { recursive: true });
  return path.join(artifacts, `${name}.png`);
};

/** Replaces the editor's text and runs it with Ctrl+Enter. */
export const runInEditor = async (page: Page, sql: string) => {
  await page.click('.cm-content');
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(sql);
  await page.keyboard.press('Control+Enter');
};

/** Where an element is drawn (playwright's boundingBox), and two checks on such boxes. */
export type Box = { x: number; y: number; width: number; height: number };
export const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
export const inside = (inner: Box, outer: Box, slack = 0.5) =>
  inner.x >= outer.x - slack &&
  inner.y >= outer.y - slack &&
  inner.x + inner.width <= outer.x + outer.width + slack &&
  inner.y + inner.height <= outer.y + outer.height + slack;
/**
 * Where an element is drawn, once it is: a view that renders again (the audit table after its load)
 * replaces the element, and a box read in between is null. Waits up to `timeoutMs`.
 */
export const drawnBox = async (locator: Locator, timeoutMs = 10_000): Promise<Box> => {
  let box: Box | null = null;
  await untilTrue(
    'the element to be drawn',
    async () => {
      box = await locator.boundingBox().catch(() => null);
      return box !== null;
    },
    { ms: timeoutMs },
  );
  return box!;
};
/** The boxes of every element a selector matches that is drawn (hidden ones left out). */
export const boxesOf = async (page: Page, selector: string) =>
  (await Promise.all((await page.locator(selector).all()).map((l) => l.boundingBox()))).filter(
    (b): b is Box => b !== null && b.width > 0 && b.height > 0,
  );

/** The chart's x tick labels, in the order the axis draws them (left to right). */
export const xTickLabels = async (page: Page) =>
  page.locator('[data-testid="chart"] svg g[aria-label="x-axis tick label"] text').allTextContents();
