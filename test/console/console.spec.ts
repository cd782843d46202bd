/**
 * The console in headless Chromium against the real service: a query and its grid, an upload that
 * lands in the tree, a model trained from the editor, a chat streamed from an agent over the fake
 * provider, the audit view, a phone viewport, and the sign-in form when the server asks for one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { ensureConsoleBuilt, launchChromium, listen, screenshotPath } from './browser';

jest.setTimeout(120_000);

let t: TestApp;
let server: Awaited<ReturnType<typeof listen>>;
let browser: Browser;
let fake: FakeOpenAi;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  ensureConsoleBuilt();
  browser = await launchChromium();
  t = await startTestApp('sqlite');
  server = await listen(t);
  fake = await startFakeOpenAi();
}, 120_000);

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await server?.close();
  await fake?.close();
  await t?.dispose();
});

const openConsole = async (viewport = { width: 1400, height: 900 }): Promise<Page> => {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url + '/');
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('[data-testid="project-mindsdb"]', { state: 'attached' });
  expect(errors).toEqual([]);
  return page;
};

/** Replaces the editor's text and runs it with Ctrl+Enter. */
const runInEditor = async (page: Page, sql: string) => {
  await page.click('.cm-content');
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(sql);
  await page.keyboard.press('Control+Enter');
};

/** Polls a condition read through the page's locators (no script evaluated in the page). */
const until = async (condition: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
};

const gridText = async (page: Page) => page.locator('[data-testid="result-grid"]').innerText();

const csvFile = (name: string, rows: number) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'console-csv-')), `${name}.csv`);
  const lines = ['sqft,rooms,location,rental_price'];
  for (let i = 0; i < rows; i++) {
    const sqft = 400 + ((i * 37) % 900);
    const rooms = 1 + (i % 4);
    const location = ['good', 'great', 'poor'][i % 3]!;
    lines.push(
      `${sqft},${rooms},${location},${Math.round(sqft * 2.5 + rooms * 100 + (location === 'great' ? 300 : 0))}`,
    );
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
};

const uploadThroughConsole = async (page: Page, name: string, rows: number) => {
  await page.setInputFiles('[data-testid="upload-input"]', csvFile(name, rows));
  await page.fill('[data-testid="upload-name"]', name);
  await page.click('[data-testid="upload-button"]');
  await page.waitForSelector(`[data-testid="file-${name}"]`);
};

describe('the web console in Chromium', () => {
  it('serves the page and its hashed bundle with the right caching', async () => {
    const index = await fetch(server.url + '/');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const asset = /src="(\/assets\/index-[\w-]+\.js)"/.exec(html)![1]!;
    const bundle = await fetch(server.url + asset);
    expect([bundle.status, bundle.headers.get('cache-control')]).toEqual([
      200,
      'public, max-age=31536000, immutable',
    ]);
  });

  it('runs a query with Ctrl+Enter and shows the grid with column types, sortable, errors with their code', async () => {
    const page = await openConsole();
    await runInEditor(page, "SELECT 2 AS n, 'b' AS letter UNION ALL SELECT 1, 'a' UNION ALL SELECT 3, 'c'");
    await page.waitForSelector('[data-testid="result-grid"]');
    expect(await page.locator('[data-testid="result-summary"]').innerText()).toMatch(/^3 rows/);
    const header = await page.locator('[data-testid="result-grid"] thead').innerText();
    expect(header).toMatch(/n\s+INTEGER/);
    expect(header).toMatch(/letter\s+VARCHAR/);
    await page.click('th[data-column="n"]');
    const firstColumn = await page
      .locator('[data-testid="result-grid"] tbody tr td:nth-child(2)')
      .allInnerTexts();
    expect(firstColumn).toEqual(['1', '2', '3']);
    await page.screenshot({ path: screenshotPath('01-query-grid'), fullPage: true });

    await runInEditor(page, 'SELECT * FROM no_such_table_here');
    await page.waitForSelector('[data-testid="sql-error"]');
    expect(await page.locator('[data-testid="sql-error"]').innerText()).toMatch(/Error \d+/);
    await page.click('[data-testid="view-history"]');
    expect(await page.locator('[data-testid="history"]').innerText()).toMatch(
      /no_such_table_here[\s\S]*error/,
    );
  });

  it('uploads a CSV with a progress bar, shows it in the tree, and charts a numeric result', async () => {
    const page = await openConsole();
    await uploadThroughConsole(page, 'console_rentals', 120);
    expect(await page.locator('[data-testid="upload-status"]').innerText()).toBe(
      'files.console_rentals: 120 rows loaded',
    );
    expect(await page.locator('[data-testid="upload-progress"]').getAttribute('value')).toBe('100');
    await page.click('[data-testid="file-console_rentals"]');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('[data-testid="result-grid"] td');
    expect(await gridText(page)).toContain('rental_price');
    await page.screenshot({ path: screenshotPath('02-upload-tree'), fullPage: true });

    // Completion knows the new file's table and its columns (from information_schema).
    await page.click('.cm-content');
    await page.keyboard.press('Control+a');
    await page.keyboard.press('Delete');
    await page.keyboard.type('SELECT * FROM files.console_r');
    await page.locator('.cm-tooltip-autocomplete li', { hasText: 'console_rentals' }).waitFor();
    await page.keyboard.press('Escape');

    await runInEditor(
      page,
      'SELECT location, avg(rental_price) AS price FROM files.console_rentals GROUP BY location ORDER BY location',
    );
    await page.waitForSelector('[data-testid="result-grid"] td');
    await page.click('[data-testid="tab-chart"]');
    await page.waitForSelector('[data-testid="chart"] svg');
    expect(await page.getAttribute('[data-testid="chart"]', 'data-kind')).toBe('bar');
    await page.selectOption('[data-testid="chart-kind"]', 'scatter');
    await page.waitForSelector('[data-testid="chart"][data-kind="scatter"] svg');
    await page.screenshot({ path: screenshotPath('03-chart'), fullPage: true });
  });

  it('trains a model from the editor and shows it complete in the tree', async () => {
    const page = await openConsole();
    await uploadThroughConsole(page, 'console_train', 200);
    await runInEditor(
      page,
      'CREATE MODEL mindsdb.console_price FROM files (SELECT * FROM console_train) PREDICT rental_price',
    );
    await page.waitForSelector('[data-testid="sql-ok"], [data-testid="result-grid"]');
    await page.click('details[data-key="models:mindsdb"] > summary').catch(() => undefined);
    const node = page.locator('[data-model="mindsdb.console_price"]');
    await node.waitFor();
    await page.screenshot({ path: screenshotPath('04-model-training'), fullPage: true });
    await page.waitForSelector('[data-model="mindsdb.console_price"][data-status="complete"]', {
      timeout: 90_000,
    });
    expect(await node.innerText()).toMatch(/complete/);
    await page.screenshot({ path: screenshotPath('05-model-complete'), fullPage: true });
  });

  it('chats with an agent over the fake provider, streaming each tool call and its SQL', async () => {
    await t.http
      .put('/api/files/console_orders')
      .attach('file', Buffer.from('id,customer,amount\n1,alice,10.5\n2,bob,3\n3,alice,7.25\n'), 'orders.csv')
      .expect(200);
    await t.http.post('/api/projects').send({ name: 'console_chat' }).expect(201);
    await t.http
      .post('/api/projects/console_chat/skills')
      .send({
        skill: {
          name: 'orders',
          type: 'sql',
          params: { database: 'files', tables: ['console_orders'], description: 'orders' },
        },
      })
      .expect(201);
    await t.http
      .post('/api/projects/console_chat/agents')
      .send({
        agent: {
          name: 'helper',
          model: {
            model_name: 'gpt-test',
            provider: 'openai',
            api_key: 'sk-console',
            base_url: fake.baseUrl,
          },
          skills: ['orders'],
        },
      })
      .expect(201);
    const query = "SELECT sum(amount) AS total FROM files.console_orders WHERE customer = 'alice'";
    fake.conversation([
      fakeReply.toolCall('sql_db_query', { query }),
      fakeReply.text('Alice ordered 17.75 in total.', { chunks: ['Alice ordered ', '17.75 ', 'in total.'] }),
    ]);

    const page = await openConsole();
    await page.click('details[data-key="project:console_chat"] > summary');
    await page.click('details[data-key="agents:console_chat"] > summary');
    await page.click('[data-testid="agents-console_chat-helper"] + button');
    await page.fill('[data-testid="chat-input"]', 'How much did alice order?');
    await page.click('[data-testid="chat-send"]');
    await page.locator('[data-testid="chat-message"]:not(.streaming) [data-testid="chat-answer"]').waitFor();
    expect(await page.locator('[data-testid="chat-answer"]').innerText()).toBe(
      'Alice ordered 17.75 in total.',
    );
    const steps = await page.locator('[data-testid="chat-steps"]').innerText();
    expect(steps).toContain('sql_db_query');
    expect(steps).toContain(query);
    expect(steps).toMatch(/1 rows/);
    await page.screenshot({ path: screenshotPath('06-agent-chat'), fullPage: true });
  });

  it('shows the event log in the audit view, filtered by type and by stream', async () => {
    await t.http.post('/api/projects').send({ name: 'console_audit' }).expect(201);
    await t.http
      .post('/api/projects/console_audit/skills')
      .send({ skill: { name: 'docs', type: 'retrieval', params: { source: 'kb' } } });
    const page = await openConsole();
    await page.click('[data-testid="view-audit"]');
    await page.waitForSelector('[data-testid="audit-table"] tbody tr');
    await page.fill('[data-testid="audit-type"]', 'ProjectCreated');
    const types = await page.locator('[data-testid="audit-table"] tbody tr td:nth-child(4)').allInnerTexts();
    expect(types.length).toBeGreaterThan(0);
    expect(new Set(types)).toEqual(new Set(['ProjectCreated']));
    await page.fill('[data-testid="audit-type"]', '');
    await page.fill('[data-testid="audit-stream"]', 'project-console_audit');
    await page.click('[data-testid="audit-load"]');
    // Evaluated in Node (the page's CSP refuses evaluated strings): every row shown is of that stream.
    await until(async () =>
      (await page.locator('[data-testid="audit-table"] tbody tr td:nth-child(3)').allInnerTexts()).every(
        (stream, _i, all) => all.length > 0 && stream === 'project-console_audit',
      ),
    );
    expect(await page.locator('[data-testid="audit-table"] tbody tr').count()).toBeGreaterThanOrEqual(1);
    await page.click('[data-testid="audit-verify"]');
    await until(
      async () => !/Verifying/.test(await page.locator('[data-testid="audit-verification"]').innerText()),
    );
    expect(await page.locator('[data-testid="audit-verification"]').innerText()).toMatch(
      /^(Ledger verified|This server has no ledger verification yet)/,
    );
    await page.screenshot({ path: screenshotPath('07-audit'), fullPage: true });
  });

  it('renders on a phone (390×844): no sideways scrolling, the schema behind a toggle, queries run', async () => {
    const page = await openConsole({ width: 390, height: 844 });
    expect(await page.locator('[data-testid="sidebar"]').isVisible()).toBe(false);
    await runInEditor(page, 'SELECT 1 AS one, 2 AS two');
    await page.waitForSelector('[data-testid="result-grid"] td');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.screenshot({ path: screenshotPath('08-phone-query') });
    await page.click('[data-testid="schema-toggle"]');
    expect(await page.locator('[data-testid="sidebar"]').isVisible()).toBe(true);
    await page.screenshot({ path: screenshotPath('09-phone-schema') });
  });

  it('asks to sign in when the server has auth on and a request answers 401, then carries on', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    let signedIn = false;
    let login: unknown;
    // The sign-in half of issue 17 is built separately: its contract is played here by the browser.
    await page.route('**/api/**', async (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === '/api/login') {
        login = route.request().postDataJSON();
        signedIn = true;
        return route.fulfill({ status: 200, contentType: 'application/json', body: '{}' });
      }
      if (url.pathname === '/api/status')
        return route.fulfill({
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify({ version: 'test', auth: { http_auth_enabled: true } }),
        });
      if (!signedIn)
        return route.fulfill({
          status: 401,
          contentType: 'application/problem+json',
          body: JSON.stringify({ title: 'Unauthorized', detail: 'Sign in first', status: 401 }),
        });
      return route.continue();
    });
    await page.goto(server.url + '/');
    await page.waitForSelector('[data-testid="signin-form"]');
    await page.screenshot({ path: screenshotPath('10-sign-in') });
    await page.fill('[data-testid="login-username"]', 'admin');
    await page.fill('[data-testid="login-password"]', 'secret');
    await page.click('[data-testid="signin-form"] button[type="submit"]');
    await page.waitForSelector('[data-testid="project-mindsdb"]');
    expect(login).toEqual({ username: 'admin', password: 'secret' });
    expect(await page.locator('[data-testid="signin-form"]').count()).toBe(0);
  });
});
