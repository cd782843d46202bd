/**
 * The first hour with the console on a server with sign-in on, in headless Chromium: signing in
 * (one probe, then the form), uploading a CSV, training a model and watching it move, querying and
 * charting in the result's order, chatting with an agent, the audit view and its ledger; and what a
 * role that cannot change things is not offered. Screenshots at each step (test-artifacts/console).
 */
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { ADMIN, login } from '../auth/support';
import {
  ensureConsoleBuilt,
  launchChromium,
  listen,
  pageReuser,
  runInEditor,
  screenshotPath,
  xTickLabels,
} from './browser';
import { untilTrue } from '../support/until';

jest.setTimeout(120_000);

const RENTALS = path.resolve(__dirname, '../../../shared/data/home_rentals.csv');

let t: TestApp;
let server: Awaited<ReturnType<typeof listen>>;
let browser: Browser;
let fake: FakeOpenAi;
let adminCookie: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  ensureConsoleBuilt();
  [browser, t, fake] = await Promise.all([
    launchChromium(),
    startTestApp('sqlite', { AUTH_USERNAME: ADMIN.name, AUTH_PASSWORD: ADMIN.password }),
    startFakeOpenAi(),
  ]);
  server = await listen(t);
  reusedPage = pageReuser(browser, contexts, server.url);
  adminCookie = await login(t, ADMIN.name, ADMIN.password);
}, 120_000);

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await server?.close();
  await fake?.close();
  // A training whose reports a failed test still held finishes before the app closes.
  releaseReports();
  await t?.running.services.models.idle();
  await t?.dispose();
});

/** The page every step takes in turn (`pageReuser`), set once the app listens. */
let reusedPage: ReturnType<typeof pageReuser>;

/** A page with no session (`reusedPage`), every answer of /api noted. */
const freshPage = async () => {
  const page = await reusedPage();
  const answers: { path: string; status: number }[] = [];
  page.on('response', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/api/')) answers.push({ path: url.pathname, status: r.status() });
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, answers, errors };
};

const signIn = async (page: Page, name: string, password: string) => {
  await page.fill('[data-testid="login-username"]', name);
  await page.fill('[data-testid="login-password"]', password);
  await page.click('[data-testid="signin-form"] button[type="submit"]');
  await page.locator('[data-testid="signed-in-user"]').waitFor();
};

const api = (p: string) => t.http.get(p).set('Cookie', adminCookie).expect(200);

/** Lets every held report go, and holds no more (see `holdReports`). */
let releaseReports: () => void = () => undefined;

/**
 * Holds the app's training progress reports (the commands on a `model-training-…` stream) until
 * the test lets them go, so that the console is seen to show a report before the next is recorded
 * however quickly the machine trains. The training goes on meanwhile; its outcome waits for its
 * reports, so the model stays in training until the last is recorded.
 */
const holdReports = () => {
  const commands = t.running.ctx.commands;
  const run = commands.run;
  const held: (() => void)[] = [];
  const recorded: { phase: string; percent: number }[] = [];
  /** Resolves once `condition` holds (browser.ts's `until`), naming what did not happen if it never does. */
  const reached = (condition: () => boolean, what: string) =>
    untilTrue(what, async () => condition(), {
      ms: 90_000,
      explain: async () => `recorded ${JSON.stringify(recorded)}`,
    });
  let holding = true;
  const spy = jest.spyOn(commands, 'run').mockImplementation((async (
    ...args: Parameters<typeof run<unknown>>
  ) => {
    if (!holding || !args[0].startsWith('model-training-')) return run(...args);
    await new Promise<void>((go) => held.push(go));
    const outcome = await run(...args);
    for (const e of outcome.events) recorded.push(e.data as { phase: string; percent: number });
    return outcome;
  }) as typeof run);
  releaseReports = () => {
    if (!holding) return;
    holding = false;
    spy.mockRestore();
    for (const go of held.splice(0)) go();
  };
  return {
    get holding() {
      return holding;
    },
    /**
     * Lets reports be recorded one at a time until one of the later phases, above `percent` and
     * below 100, is: answers its percentage, or null when the training ended without one.
     */
    recordUntilLaterPhase: async (percent: number): Promise<number | null> => {
      for (;;) {
        await reached(() => held.length > 0, 'the training made no further progress report');
        const before = recorded.length;
        held.shift()!();
        await reached(() => recorded.length > before, 'a progress report let go was not recorded');
        const report = recorded.at(-1)!;
        if (report.phase !== 'reading' && report.percent > percent && report.percent < 100)
          return report.percent;
        if (report.percent >= 100) return null;
      }
    },
    /** Records the held report and every later one as the training makes it. */
    recordTheRest: () => releaseReports(),
  };
};

describe('the first hour with the console (sign-in on)', () => {
  it('signs in, uploads, trains and watches, queries and charts, chats, and verifies the ledger', async () => {
    const { page, answers, errors } = await freshPage();

    // 1. Sign in: one probe answers 401, then the form; nothing else is read, no "Sign out" yet.
    await page.goto(server.url + '/');
    await page.waitForSelector('[data-testid="signin-form"]');
    expect(answers.filter((a) => a.status === 401)).toEqual([{ path: '/api/me', status: 401 }]);
    expect(answers.map((a) => a.path)).toEqual(['/api/status', '/api/me']);
    expect(await page.locator('[data-testid="sign-out"]').count()).toBe(0);
    expect(await page.locator('header').innerText()).not.toMatch(/Sign out/);
    await page.screenshot({ path: screenshotPath('fh-01-sign-in') });
    await signIn(page, ADMIN.name, ADMIN.password);
    expect(await page.locator('[data-testid="signed-in-user"]').innerText()).toBe(ADMIN.name);
    expect(await page.locator('[data-testid="signed-in-role"]').innerText()).toBe('admin');
    await page.locator('[data-testid="sign-out"]').waitFor();
    await page.waitForSelector('[data-testid="project-mindsdb"]', { state: 'attached' });
    expect(answers.filter((a) => a.status === 401)).toHaveLength(1);
    await page.screenshot({ path: screenshotPath('fh-02-signed-in') });

    // 2. Upload a CSV: progress to the end, the rows counted, the table in the tree and on the server.
    await page.setInputFiles('[data-testid="upload-input"]', RENTALS);
    expect(await page.inputValue('[data-testid="upload-name"]')).toBe('home_rentals');
    await page.fill('[data-testid="upload-name"]', 'rentals');
    await page.click('[data-testid="upload-button"]');
    await page.waitForSelector('[data-testid="file-rentals"]');
    expect(await page.locator('[data-testid="upload-status"]').innerText()).toBe(
      'files.rentals: 5037 rows loaded',
    );
    expect(await page.locator('[data-testid="upload-progress"]').getAttribute('value')).toBe('100');
    const files = (await api('/api/files')).body as { name: string; row_count: number }[];
    expect(files.find((f) => f.name === 'rentals')?.row_count).toBe(5037);
    await page.screenshot({ path: screenshotPath('fh-03-uploaded') });

    // 3. Train, and watch the progress move: phase, percentage and time, while it trains. The console
    // looks every 500 ms, and the 5,037 rows train in 0.3 s on a quick machine (the console saw
    // "Reading data" and then "complete"): the training's reports are held back (`holdReports`),
    // and two of its later phases' are each recorded only once the console showed the one before.
    const reports = holdReports();
    await runInEditor(
      page,
      'CREATE MODEL mindsdb.rentals_price FROM files (SELECT * FROM rentals) PREDICT rental_price',
    );
    const node = page.locator('[data-model="mindsdb.rentals_price"]');
    await node.waitFor();
    const seen: string[] = [];
    let shot = false;
    /** The percentage of the report the console is to show next (null: none awaited). */
    let awaited: number | null = null;
    let awaitedShown = 0;
    const deadline = Date.now() + 90_000;
    while ((await node.getAttribute('data-status')) !== 'complete') {
      if (Date.now() > deadline) throw new Error(`training never completed; saw ${seen.join(' | ')}`);
      const shown = await page
        .locator('[data-testid="training-item"] [data-testid="training-progress"]')
        .allInnerTexts();
      for (const text of shown) if (seen.at(-1) !== text) seen.push(text);
      if (!shot && shown.some((s) => /phase [345]\/5/.test(s))) {
        await page.screenshot({ path: screenshotPath('fh-04-training') });
        shot = true;
      }
      if (reports.holding && (awaited === null || shown.some((s) => s.includes(`· ${awaited}% ·`)))) {
        if (awaited !== null) awaitedShown += 1;
        awaited = awaitedShown < 2 ? await reports.recordUntilLaterPhase(awaited ?? 0) : null;
        if (awaited === null) reports.recordTheRest();
      }
      await new Promise((r) => setTimeout(r, 40));
    }
    const percents = seen.flatMap((s) => {
      const m = /· (\d+)%/.exec(s);
      return m ? [Number(m[1])] : [];
    });
    // It moved: past the reading phase, through more than one percentage, never back.
    expect(
      seen.some((s) => /^training · phase [345]\/5 (Encoding|Training|Calibrating) · \d+% · \d+ s$/.test(s)),
    ).toBe(true);
    expect(new Set(percents).size).toBeGreaterThanOrEqual(2);
    expect(percents.some((p) => p > 0 && p < 100)).toBe(true);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(await node.innerText()).toMatch(/complete/);
    const model = (await api('/api/projects/mindsdb/models/rentals_price')).body as { status: string };
    expect(model.status).toBe('complete');
    await page.screenshot({ path: screenshotPath('fh-05-trained') });

    // 4. Query the model and chart it in the result's order.
    await runInEditor(
      page,
      'SELECT t.neighborhood, avg(m.rental_price) AS predicted FROM files.rentals AS t JOIN mindsdb.rentals_price AS m GROUP BY t.neighborhood ORDER BY predicted DESC',
    );
    await page.waitForSelector('[data-testid="result-grid"] th[data-column="predicted"]');
    const order = await page.locator('[data-testid="result-grid"] tbody tr td:nth-child(2)').allInnerTexts();
    expect(order.length).toBeGreaterThanOrEqual(10);
    expect(order).not.toEqual([...order].sort());
    await page.click('[data-testid="tab-chart"]');
    await page.waitForSelector('[data-testid="chart"][data-kind="bar"] svg');
    expect(await xTickLabels(page)).toEqual(order);
    await page.screenshot({ path: screenshotPath('fh-06-chart') });

    // 5. Make an agent with a SQL skill in the editor and chat with it (the fake provider answers).
    await runInEditor(
      page,
      "CREATE SKILL rentals_sql USING type = 'sql', database = 'files', tables = ['rentals'], description = 'home rentals'",
    );
    await page.waitForSelector('[data-testid="sql-ok"]');
    await runInEditor(
      page,
      `CREATE AGENT rentals_agent USING model = {"provider": "openai", "model_name": "gpt-test", "api_key": "sk-first-hour", "base_url": "${fake.baseUrl}"}, skills = ['rentals_sql']`,
    );
    await page
      .locator('[data-testid="chat-agent"] option[value="mindsdb.rentals_agent"]')
      .waitFor({ state: 'attached' });
    const query = 'SELECT count(*) AS homes FROM files.rentals';
    fake.conversation([
      fakeReply.toolCall('sql_db_query', { query }),
      fakeReply.text('There are 5037 homes.', { chunks: ['There are ', '5037 homes.'] }),
    ]);
    await page.click('[data-testid="view-chat"]');
    await page.selectOption('[data-testid="chat-agent"]', 'mindsdb.rentals_agent');
    await page.fill('[data-testid="chat-input"]', 'How many homes are there?');
    await page.click('[data-testid="chat-send"]');
    await page.locator('[data-testid="chat-message"]:not(.streaming) [data-testid="chat-answer"]').waitFor();
    expect(await page.locator('[data-testid="chat-answer"]').innerText()).toBe('There are 5037 homes.');
    expect(await page.locator('[data-testid="chat-sql"]').allInnerTexts()).toEqual([query]);
    await page.screenshot({ path: screenshotPath('fh-07-chat') });

    // 6. The audit view: what we did, by whom, and the ledger verified.
    await page.click('[data-testid="view-audit"]');
    await page.fill('[data-testid="audit-stream"]', 'project-mindsdb');
    await page.click('[data-testid="audit-load"]');
    const defined = page.locator('[data-testid="audit-table"] tbody tr', { hasText: 'ModelVersionDefined' });
    await defined.waitFor();
    expect(await defined.locator('td:nth-child(5)').innerText()).toMatch(/^user:/);
    expect(await defined.innerText()).toContain('rentals_price');
    await page.click('[data-testid="audit-verify"]');
    await untilTrue(
      'the verification to end',
      async () => !/Verifying/.test(await page.locator('[data-testid="audit-verification"]').innerText()),
      { ms: 20_000 },
    );
    expect(await page.locator('[data-testid="audit-verification"]').innerText()).toMatch(
      /^Ledger verified: \d+ events/,
    );
    const verified = (await api('/api/audit/verify')).body as { ok: boolean };
    expect(verified.ok).toBe(true);
    await page.screenshot({ path: screenshotPath('fh-08-audit'), fullPage: true });
    expect(errors).toEqual([]);
  });

  it('offers an analyst no upload and an auditor the log, each named with their role', async () => {
    for (const [name, role] of [
      ['first_hour_analyst', 'analyst'],
      ['first_hour_auditor', 'auditor'],
    ] as const)
      await t.http
        .post('/api/users')
        .set('Cookie', adminCookie)
        .send({ name, password: `${name}-password`, role })
        .expect(201);

    const analyst = await freshPage();
    await analyst.page.goto(server.url + '/');
    await analyst.page.waitForSelector('[data-testid="signin-form"]');
    await signIn(analyst.page, 'first_hour_analyst', 'first_hour_analyst-password');
    expect(await analyst.page.locator('[data-testid="signed-in-role"]').innerText()).toBe('analyst');
    await analyst.page.waitForSelector('[data-testid="project-mindsdb"]', { state: 'attached' });
    expect(await analyst.page.locator('[data-testid="upload-input"]').isVisible()).toBe(false);
    expect(await analyst.page.locator('[data-testid="upload-button"]').isVisible()).toBe(false);
    expect(await analyst.page.locator('[data-testid="view-chat"]').isVisible()).toBe(true);
    await analyst.page.screenshot({ path: screenshotPath('fh-09-analyst') });

    const auditor = await freshPage();
    await auditor.page.goto(server.url + '/');
    await auditor.page.waitForSelector('[data-testid="signin-form"]');
    await signIn(auditor.page, 'first_hour_auditor', 'first_hour_auditor-password');
    expect(await auditor.page.locator('[data-testid="signed-in-role"]').innerText()).toBe('auditor');
    await auditor.page.waitForSelector('[data-testid="audit-table"] tbody tr');
    expect(await auditor.page.locator('[data-testid="view-chat"]').isVisible()).toBe(false);
    // Nothing an auditor may not read was asked for (every answer after sign-in was allowed).
    expect(auditor.answers.filter((a) => a.status === 403)).toEqual([]);
    await auditor.page.screenshot({ path: screenshotPath('fh-10-auditor') });
  });
});
