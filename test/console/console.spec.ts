/**
 * The console in headless Chromium against the real service: a query and its grid, an upload that
 * lands in the tree, a model trained from the editor, a chat streamed from an agent over the fake
 * provider, the audit view, a phone viewport, and the sign-in form when the server asks for one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import {
  boxesOf,
  type Box,
  drawnBox,
  ensureConsoleBuilt,
  inside,
  launchChromium,
  listen,
  overlaps,
  runInEditor,
  screenshotPath,
  xTickLabels,
  pageReuser,
} from './browser';
import { untilTrue } from '../support/until';

jest.setTimeout(120_000);

let t: TestApp;
let server: Awaited<ReturnType<typeof listen>>;
let browser: Browser;
let fake: FakeOpenAi;
/** The page the console opens in, unless a test asks for a time zone of its own (a context's setting). */
let blankPage: ReturnType<typeof pageReuser>;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  ensureConsoleBuilt();
  [browser, t, fake] = await Promise.all([launchChromium(), startTestApp('sqlite'), startFakeOpenAi()]);
  server = await listen(t);
  blankPage = pageReuser(browser, contexts, server.url);
}, 120_000);

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await server?.close();
  await fake?.close();
  await t?.dispose();
});

const openConsole = async (
  viewport = { width: 1400, height: 900 },
  options: { timezoneId?: string; permissions?: string[] } = {},
): Promise<Page> => {
  let page: Page;
  if (options.timezoneId === undefined) page = await blankPage(viewport, options.permissions);
  else {
    const context = await browser.newContext({ viewport, ...options });
    contexts.push(context);
    page = await context.newPage();
  }
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url + '/');
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('[data-testid="project-mindsdb"]', { state: 'attached' });
  expect(errors).toEqual([]);
  return page;
};

/**
 * Puts `text` in the editor as a user who pasted all but its last two characters and typed those:
 * completion opens on the typed ones, without a keystroke's round trip to the browser for each of
 * the others.
 */
const typeEnding = async (page: Page, text: string) => {
  await page.keyboard.insertText(text.slice(0, -2));
  await page.keyboard.type(text.slice(-2));
};

const gridText = async (page: Page) => page.locator('[data-testid="result-grid"]').innerText();

/** The controls of a view (and the header) that one of these boxes covers, by test id or text. */
const coveredControls = async (page: Page, view: string, boxes: Box[]) => {
  const controls = page.locator(`${view} :is(button, textarea, select, input), header button`);
  expect(await controls.count()).toBeGreaterThanOrEqual(4);
  const covered: string[] = [];
  for (const control of await controls.all()) {
    const box = await control.boundingBox();
    if (box && box.width > 0 && boxes.some((b) => overlaps(box, b)))
      covered.push((await control.getAttribute('data-testid')) ?? (await control.innerText()));
  }
  return covered;
};

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
    await typeEnding(page, 'SELECT * FROM files.console_r');
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
    // The tree opens the project's models by itself when a training starts.
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
    // Two failed runs leave two error toasts up while we chat.
    await page.route('**/api/sql/query', (route) =>
      route.fulfill({
        status: 500,
        contentType: 'application/problem+json',
        body: JSON.stringify({ title: 'Internal Server Error', detail: 'the server broke', status: 500 }),
      }),
    );
    await runInEditor(page, 'SELECT 1');
    await page.locator('.toast').first().waitFor();
    await runInEditor(page, 'SELECT 2');
    await untilTrue('two toasts', async () => (await page.locator('.toast').count()) === 2, { ms: 20_000 });
    await page.unroute('**/api/sql/query');

    await page.click('details[data-key="project:console_chat"] > summary');
    await page.click('details[data-key="agents:console_chat"] > summary');
    await page.click('[data-testid="agents-console_chat-helper"] + button');
    await page.fill('[data-testid="chat-input"]', 'How much did alice order?');
    // The toasts stack apart from each other and cover no control of the chat (nor the header's).
    const toasts = await boxesOf(page, '.toast');
    expect(toasts).toHaveLength(2);
    expect(overlaps(toasts[0]!, toasts[1]!)).toBe(false);
    await page.screenshot({ path: screenshotPath('06a-chat-toasts'), fullPage: true });
    expect(await coveredControls(page, 'section[data-view="chat"]', toasts)).toEqual([]);
    // Nor the audit view's filters, which reach the right edge.
    await page.click('[data-testid="view-audit"]');
    await page.waitForSelector('[data-testid="audit-table"] tbody tr');
    expect(await coveredControls(page, 'section[data-view="audit"]', await boxesOf(page, '.toast'))).toEqual(
      [],
    );
    await page.click('[data-testid="view-chat"]');
    await page.click('[data-testid="chat-send"]', { timeout: 2000 });
    await page.locator('[data-testid="chat-message"]:not(.streaming) [data-testid="chat-answer"]').waitFor();
    expect(await page.locator('[data-testid="chat-answer"]').innerText()).toBe(
      'Alice ordered 17.75 in total.',
    );
    const steps = await page.locator('[data-testid="chat-steps"]').innerText();
    expect(steps).toContain('sql_db_query');
    expect(steps).toContain(query);
    expect(steps).toMatch(/1 rows/);
    // The agent's SQL shows once (the tool call's input), not again as "SQL run".
    expect(await page.locator('[data-testid="chat-sql"]').allInnerTexts()).toEqual([query]);
    await page.screenshot({ path: screenshotPath('06-agent-chat'), fullPage: true });
    // Each toast closes with its button.
    while ((await page.locator('[data-testid="toast-close"]').count()) > 0)
      await page.locator('[data-testid="toast-close"]').first().click();
    expect(await page.locator('.toast').count()).toBe(0);
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
    await untilTrue(
      "only the project's stream in the audit table",
      async () =>
        (await page.locator('[data-testid="audit-table"] tbody tr td:nth-child(3)').allInnerTexts()).every(
          (stream, _i, all) => all.length > 0 && stream === 'project-console_audit',
        ),
      { ms: 20_000 },
    );
    expect(await page.locator('[data-testid="audit-table"] tbody tr').count()).toBeGreaterThanOrEqual(1);
    await page.click('[data-testid="audit-verify"]');
    await untilTrue(
      'the verification to end',
      async () => !/Verifying/.test(await page.locator('[data-testid="audit-verification"]').innerText()),
      { ms: 20_000 },
    );
    expect(await page.locator('[data-testid="audit-verification"]').innerText()).toMatch(
      /^(Ledger verified|This server has no ledger verification yet)/,
    );
    await page.screenshot({ path: screenshotPath('07-audit'), fullPage: true });
  });

  it('shows a chat-channel integration as what it is, with its chatbots, and no error', async () => {
    expect(
      (
        await querySql(
          t,
          `CREATE DATABASE console_tg WITH ENGINE = 'telegram', PARAMETERS = {"token": "123456:console-fake"}`,
        )
      ).type,
    ).toBe('ok');
    await t.http.post('/api/projects').send({ name: 'console_bots' }).expect(201);
    await t.http
      .post('/api/projects/console_bots/agents')
      .send({
        agent: {
          name: 'concierge',
          model: { model_name: 'gpt-test', provider: 'openai', api_key: 'sk-bots', base_url: fake.baseUrl },
        },
      })
      .expect(201);
    await t.http
      .post('/api/projects/console_bots/chatbots')
      .send({
        chatbot: {
          name: 'tg_helper',
          agent_name: 'concierge',
          database_name: 'console_tg',
          is_running: false,
        },
      })
      .expect(201);

    const page = await openConsole();
    const node = page.locator('details[data-key="db:console_tg"]');
    await node.locator('> summary').click();
    // Its content is drawn once it opens (a toggle event later): wait for it, past any "loading…".
    await untilTrue(
      'the node drawn',
      async () =>
        (await node.locator('> :not(summary)').count()) > 0 && !/loading/.test(await node.innerText()),
      { ms: 20_000 },
    );
    const text = await node.innerText();
    expect(text).toMatch(/telegram chat channel/);
    expect(text).toContain('console_bots.tg_helper');
    expect(text).toMatch(/stopped · agent concierge/);
    expect(text).not.toMatch(/no tables$/m);
    await page.screenshot({ path: screenshotPath('11-chat-channel'), fullPage: true });
    // No error toast came up (and none comes late: the tree asked the server nothing about tables).
    await page.click('[data-testid="refresh-tree"]');
    await page.locator('details[data-key="db:console_tg"]', { hasText: 'tg_helper' }).waitFor();
    expect(await page.locator('.toast').count()).toBe(0);
  });

  it('charts bars in the result’s order with long labels turned to fit, and a time column on a time axis', async () => {
    const neighborhoods = [
      ['alcatraz_ave', 2900],
      ['berkeley_hills', 3400],
      ['downtown', 3100],
      ['east_elmwood', 2500],
      ['frontage_rd', 2000],
      ['north_berkeley', 3300],
      ['northwest', 2600],
      ['south_side', 2300],
      ['thowsand_oaks', 3600],
      ['west_welmwood', 2700],
      ['westbrae', 2800],
      ['zaytuna_college', 2200],
      ['a_really_long_neighborhood_name_on_the_left', 1000],
    ] as const;
    const csv = ['neighborhood,rent', ...neighborhoods.map(([n, r]) => `${n},${r}`)].join('\n') + '\n';
    await t.http.put('/api/files/console_hoods').attach('file', Buffer.from(csv), 'hoods.csv').expect(200);
    const byRent = [...neighborhoods].sort((a, b) => b[1] - a[1]).map(([n]) => n);

    const page = await openConsole({ width: 1000, height: 900 });
    await runInEditor(
      page,
      'SELECT neighborhood, max(rent) AS top_rent FROM files.console_hoods GROUP BY neighborhood ORDER BY top_rent DESC',
    );
    await page.waitForSelector('[data-testid="result-grid"] td');
    await page.click('[data-testid="tab-chart"]');
    await page.waitForSelector('[data-testid="chart"][data-kind="bar"] svg');
    // The bars keep the result's order (its ORDER BY), not the alphabet's.
    const labels = await xTickLabels(page);
    expect(labels.map((l) => l.replace(/…$/, ''))).toEqual(
      byRent.map((n) => (n.length > 28 ? n.slice(0, 27) : n)),
    );
    // Every label is whole inside the chart, and none runs into the axis title.
    const svg = await drawnBox(page.locator('[data-testid="chart"] svg').first());
    const title = (await boxesOf(page, '[data-testid="chart"] svg g[aria-label="x-axis label"] text'))[0]!;
    expect(title).toBeDefined();
    const labelBoxes = await boxesOf(
      page,
      '[data-testid="chart"] svg g[aria-label="x-axis tick label"] text',
    );
    expect(labelBoxes).toHaveLength(neighborhoods.length);
    for (const box of labelBoxes) {
      expect(inside(box, svg)).toBe(true);
      expect(overlaps(box, title)).toBe(false);
    }
    await page.screenshot({ path: screenshotPath('12-chart-order-labels'), fullPage: true });

    // Days with a gap: as bars on a time axis, the gap shows (the 10th stands apart).
    await runInEditor(
      page,
      "SELECT CAST('2026-11-01' AS DATE) AS day, 120 AS amount UNION ALL SELECT CAST('2026-11-02' AS DATE), 95 UNION ALL SELECT CAST('2026-11-03' AS DATE), 80 UNION ALL SELECT CAST('2026-11-10' AS DATE), 60 ORDER BY day",
    );
    await page.waitForSelector('[data-testid="result-summary"]:has-text("4 rows")');
    await page.click('[data-testid="tab-chart"]');
    await page.selectOption('[data-testid="chart-kind"]', 'bar');
    await page.waitForSelector('[data-testid="chart"][data-kind="bar"] svg');
    const bars = (
      await boxesOf(
        page,
        '[data-testid="chart"] svg g[aria-label="bar"] rect, [data-testid="chart"] svg g[aria-label="rect"] rect',
      )
    )
      .map((b) => b.x + b.width / 2)
      .sort((a, b) => a - b);
    expect(bars).toHaveLength(4);
    const step = bars[1]! - bars[0]!;
    expect(bars[3]! - bars[2]!).toBeGreaterThan(5 * step);
    // Its ticks are dates on a calendar, not one raw timestamp per row.
    expect((await xTickLabels(page)).join(' ')).not.toMatch(/T00:00|GMT|2026-11-10/);
    await page.screenshot({ path: screenshotPath('13-chart-time-axis'), fullPage: true });
  });

  it('shows doubles rounded for reading in the grid, the full value on hover and in copies', async () => {
    const page = await openConsole(undefined, { permissions: ['clipboard-read', 'clipboard-write'] });
    await runInEditor(
      page,
      'SELECT CAST(2299.7504708632114 AS DOUBLE) AS price, 42 AS n, CAST(0.000012345678 AS DOUBLE) AS tiny',
    );
    await page.waitForSelector('[data-testid="result-grid"] td');
    const cells = page.locator('[data-testid="result-grid"] tbody tr td');
    expect(await cells.allInnerTexts()).toEqual(['1', '2299.75', '42', '1.235e-5']);
    expect(await cells.nth(1).getAttribute('title')).toBe('2299.7504708632114');
    expect(await cells.nth(2).getAttribute('title')).toBeNull();
    await page.click('[data-testid="copy-csv"]');
    await untilTrue(
      'the CSV copied',
      async () => /2299/.test(String(await page.evaluate('navigator.clipboard.readText()'))),
      { ms: 20_000 },
    );
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(
      'price,n,tiny\r\n2299.7504708632114,42,0.000012345678\r\n',
    );
    await page.click('[data-testid="copy-json"]');
    await untilTrue(
      'the JSON copied',
      async () => /\[/.test(String(await page.evaluate('navigator.clipboard.readText()'))),
      { ms: 20_000 },
    );
    expect(JSON.parse(String(await page.evaluate('navigator.clipboard.readText()')))).toEqual([
      { price: 2299.7504708632114, n: 42, tiny: 0.000012345678 },
    ]);
  });

  it('completes this dialect’s words and the schema’s names, and closes the popup on Run', async () => {
    await t.http
      .put('/api/files/console_complete')
      .attach('file', Buffer.from('sku,qty\na,1\n'), 'c.csv')
      .expect(200);
    const page = await openConsole();
    const options = page.locator('.cm-tooltip-autocomplete li');
    const typeFresh = async (text: string) => {
      await page.click('.cm-content');
      await page.keyboard.press('Control+a');
      await page.keyboard.press('Delete');
      await typeEnding(page, text);
    };
    // MindsDB's words are offered…
    await typeFresh('CREATE MODEL m FROM files (SELECT * FROM t) PREDI');
    await options.filter({ hasText: /^PREDICT$/ }).waitFor();
    await typeFresh('CREATE KNOWLEDGE_B');
    await options.filter({ hasText: /^KNOWLEDGE_BASE$/ }).waitFor();
    // …the MySQL client's commands and the standard's unused words are not.
    await typeFresh('SELECT NO');
    await options.filter({ hasText: /^NOT$/ }).waitFor();
    expect(await options.allInnerTexts()).not.toContain('NOPAGER');
    await typeFresh('SELECT CURRENT_');
    await options.filter({ hasText: /^CURRENT_DATE$/ }).waitFor();
    const current = await options.allInnerTexts();
    expect(current).not.toContain('CURRENT_TRANSFORM_GROUP_FOR_TYPE');
    expect(current).not.toContain('CURRENT_DEFAULT_TRANSFORM_GROUP');
    // The schema's names: a file's table and its columns.
    await typeFresh('SELECT * FROM files.console_com');
    await options.filter({ hasText: 'console_complete' }).waitFor();
    await typeFresh('SELECT files.console_complete.q');
    await options.filter({ hasText: /^qty$/ }).waitFor();
    await page.screenshot({ path: screenshotPath('14-completion') });
    // Run closes the popup.
    await typeFresh('SELECT c.qty FROM files.console_complete AS c ORDER BY c.sku');
    await options.filter({ hasText: /^sku$/ }).waitFor();
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('[data-testid="result-summary"]:has-text("1 row")');
    expect(await page.locator('.cm-tooltip-autocomplete').count()).toBe(0);
  });

  it('fits the audit view’s data in its column (a row expands to all of it), times local and labelled as in History', async () => {
    const long = `a description that goes on ${'and on '.repeat(60)}until the end`;
    await t.http.post('/api/projects').send({ name: 'console_audit_wide' }).expect(201);
    await t.http
      .post('/api/projects/console_audit_wide/skills')
      .send({ skill: { name: 'wide', type: 'retrieval', params: { source: 'kb', description: long } } })
      .expect(201);
    const logged = (await t.http.get('/api/events?stream=project-console_audit_wide&limit=10').expect(200))
      .body as { events: { type: string; recorded_at: string }[] };
    const created = logged.events.find((e) => e.type === 'SkillCreated')!;
    // The log's time is UTC; Kolkata is UTC+05:30 all year.
    const utc = new Date(created.recorded_at.replace(' ', 'T') + 'Z');
    const kolkata = new Date(utc.getTime() + 330 * 60_000).toISOString().slice(0, 19).replace('T', ' ');

    const page = await openConsole({ width: 1280, height: 900 }, { timezoneId: 'Asia/Kolkata' });
    await runInEditor(page, 'SELECT 1 AS one');
    await page.waitForSelector('[data-testid="result-grid"] td');
    await page.click('[data-testid="view-audit"]');
    await page.fill('[data-testid="audit-stream"]', 'project-console_audit_wide');
    await page.click('[data-testid="audit-load"]');
    const row = page
      .locator('[data-testid="audit-table"] tbody tr', { hasText: 'SkillCreated' })
      .filter({ hasText: 'project-console_audit_wide' });
    await row.waitFor();
    expect(await page.locator('[data-testid="audit-table"] thead').innerText()).toMatch(
      /recorded \(local time, UTC\+05:30\)/,
    );
    expect(await row.locator('[data-testid="audit-recorded"]').innerText()).toBe(kolkata);

    // The data column ends inside the view: the table does not run past its frame.
    const frame = await drawnBox(page.locator('section[data-view="audit"] .grid-wrap'));
    const data = row.locator('[data-testid="audit-data"]');
    expect(inside(await drawnBox(data), { ...frame, height: 1e6 })).toBe(true);
    expect(
      await page
        .locator('section[data-view="audit"] .grid-wrap')
        .evaluate((el) => el.scrollWidth <= el.clientWidth),
    ).toBe(true);
    // Expanded, the row shows all of the event, wrapped inside its cell.
    await data.locator('summary').click();
    const pre = data.locator('pre');
    expect(await pre.innerText()).toContain(long);
    expect(inside(await drawnBox(pre), { ...(await drawnBox(data)), height: 1e6 })).toBe(true);
    await page.screenshot({ path: screenshotPath('15-audit-wrapped'), fullPage: true });

    // History writes its times the same way: local, labelled.
    await page.click('[data-testid="view-history"]');
    expect(await page.locator('[data-testid="history-zone"]').innerText()).toMatch(/UTC\+05:30/);
    expect(await page.locator('[data-testid="history-time"]').first().innerText()).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
    );
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
    const page = await blankPage({ width: 1400, height: 900 });
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
