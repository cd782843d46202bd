/**
 * The MCP URL switches, generated (fast-check, a fresh seed each run, printed; bounded runs):
 * - narrowing: for any principal (or none, sign-in off) and any switches, the connection's principal
 *   is refused (a token scoped elsewhere) or holds no right the principal lacks: no statement kind
 *   and no table it may reach that the principal may not;
 * - withholding: on a read-only connection a mutating tool without a read-only form is not offered;
 *   `features` offers exactly its groups' tools;
 * - hostile URLs (lone surrogates, NUL, huge, empty, unknown names and values, repeats) on every MCP
 *   URL: a session, or a 4xx problem+json {title, detail, status} naming the switch; never a 500.
 * Beside the first, a kill check: switches that narrow nothing when sign-in is off (no principal to
 * narrow, so read_only lets every statement through) are caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { z } from 'zod';
import { isDomainError } from '../../src/shared/errors';
import type { Principal } from '../../src/shared/requestContext';
import { checkStatement, rolePolicy } from '../../src/sql/statements/roles';
import {
  GROUP_NAMES,
  groupOf,
  narrowPrincipal,
  SWITCH_NAMES,
  TOOL_GROUPS,
  toolsFor,
  type Switches,
} from '../../src/mcp/switches';
import type { Tool } from '../../src/mcp/tools';
import { startTestApp, type TestApp } from '../support/app';
import { hostileStrings, pathSegment } from '../support/hostile';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { listen, type Listening } from './support';

const SEED = propertySeed();

const ROLES = ['admin', 'editor', 'analyst', 'auditor'] as const;
const PROJECTS = ['pa', 'PA', 'pb', 'mindsdb'];
const principals: fc.Arbitrary<Principal | undefined> = fc.option(
  fc.record({
    user: fc.constant('u'),
    role: fc.constantFrom(...ROLES),
    project: fc.option(fc.constantFrom(...PROJECTS), { nil: null }),
  }),
  { nil: undefined },
);
const switchesArb: fc.Arbitrary<Switches> = fc.record({
  readOnly: fc.boolean(),
  project: fc.option(fc.constantFrom(...PROJECTS), { nil: null }),
  features: fc.option(fc.subarray(GROUP_NAMES, { minLength: 1 }), { nil: null }),
});

const KINDS = ['Show', 'Describe', 'Use', 'Set', 'CreateSkill', 'DropProject', 'Insert', 'CreateModel'];
const TABLES: [string, string][] = [
  ['pa', 'skills'],
  ['pb', 'skills'],
  ['mindsdb', 'models'],
  ['information_schema', 'events'],
  ['information_schema', 'tables'],
  ['pa', '(native query)'],
];

/** Whether `principal` may run a statement of `kind` (undefined: sign-in off, everything). */
const mayRun = (principal: Principal | undefined, kind: string) => {
  try {
    checkStatement(principal, kind);
    return true;
  } catch {
    return false;
  }
};
/** Whether `principal`'s table policy lets a read reach `database`.`table`, and whether it may write. */
const mayRead = (principal: Principal | undefined, [database, table]: [string, string]) => {
  const policy = rolePolicy(principal);
  if (!policy) return true;
  try {
    policy.check(database, table);
    return true;
  } catch {
    return false;
  }
};
const mayWrite = (principal: Principal | undefined) => rolePolicy(principal) === undefined;

describe('MCP URL switches, generated', () => {
  /** The promise for one principal and one set of switches, `narrow` narrowing. */
  const neverWidens = (
    principal: Principal | undefined,
    switches: Switches,
    narrow: typeof narrowPrincipal,
  ) => {
    let narrowed: Principal | undefined;
    try {
      narrowed = narrow(principal, switches, 'address:127.0.0.1');
    } catch (error) {
      // Refused only as the widening of a scoped token, a 403.
      expect(isDomainError(error) && error.kind === 'Forbidden').toBe(true);
      expect(principal?.project).not.toBeNull();
      expect(principal?.project?.toLowerCase()).not.toBe(switches.project?.toLowerCase());
      return;
    }
    for (const kind of KINDS) if (mayRun(narrowed, kind)) expect(mayRun(principal, kind)).toBe(true);
    for (const table of TABLES) if (mayRead(narrowed, table)) expect(mayRead(principal, table)).toBe(true);
    if (mayWrite(narrowed)) expect(mayWrite(principal)).toBe(true);
    // And each switch narrows as it says.
    if (switches.readOnly) expect(mayWrite(narrowed)).toBe(false);
    if (switches.readOnly) expect(mayRun(narrowed, 'CreateSkill')).toBe(false);
    if (switches.project !== null)
      expect(narrowed?.project?.toLowerCase()).toBe((principal?.project ?? switches.project).toLowerCase());
  };

  it(`never widen a principal: every right of the connection's is the principal's (seed ${SEED})`, () => {
    fc.assert(
      fc.property(principals, switchesArb, (principal, switches) =>
        neverWidens(principal, switches, narrowPrincipal),
      ),
      { seed: SEED, numRuns: propertyRuns(300) },
    );
  });

  it('kill check: switches that narrow nothing when sign-in is off (no principal) are caught', () => {
    const signedInOnly: typeof narrowPrincipal = (principal, switches, actor) =>
      principal === undefined ? undefined : narrowPrincipal(principal, switches, actor);
    expectCaught(
      fc.property(principals, switchesArb, (principal, switches) =>
        neverWidens(principal, switches, signedInOnly),
      ),
      { seed: SEED, numRuns: propertyRuns(300) },
    );
  });

  it(`offers exactly the asked groups' tools, and withholds a mutating tool without a read-only form (seed ${SEED})`, () => {
    const made = (name: string, readOnlyHint: boolean, readOnlyForm?: () => Tool): Tool => ({
      name,
      description: `${name} does a thing`,
      input: z.object({}),
      annotations: {
        title: name,
        readOnlyHint,
        destructiveHint: !readOnlyHint,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: () => Promise.reject(new Error('not run here')),
      ...(readOnlyForm ? { readOnlyForm } : {}),
    });
    const readOnlyQuery = made('query', true);
    const tools = [
      ...Object.values(TOOL_GROUPS)
        .flat()
        .filter((n) => n !== 'query')
        .map((n) => made(n, true)),
      made('query', false, () => readOnlyQuery),
      made('drop_everything', false),
    ];
    fc.assert(
      fc.property(switchesArb, (switches) => {
        const { offered, withheld } = toolsFor(tools, switches);
        const names = offered.map((x) => x.name);
        expect(names.length + withheld.size).toBe(tools.length);
        for (const tool of offered) {
          const group = groupOf(tool.name);
          if (switches.features !== null) expect(group && switches.features.includes(group)).toBe(true);
          if (switches.readOnly) expect(tool.annotations.readOnlyHint).toBe(true);
        }
        if (switches.readOnly || switches.features !== null) expect(names).not.toContain('drop_everything');
        else expect(names).toContain('drop_everything');
        if (switches.readOnly && names.includes('query'))
          expect(offered.find((x) => x.name === 'query')).toBe(readOnlyQuery);
        for (const [, { reason }] of withheld) expect(reason).toMatch(/features=|read_only=true/);
      }),
      { seed: SEED, numRuns: propertyRuns(200) },
    );
  });
});

describe('hostile MCP URL switches (sqlite)', () => {
  let t: TestApp;
  let l: Listening;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    l = await listen(t);
    await t.http.post('/api/projects').send({ name: 'pa' }).expect(201);
  });
  afterAll(async () => {
    await l?.close();
    await t?.dispose();
  });

  const hostile = hostileStrings(['true', 'false', 'sql', ',', 'catalog', 'pa', '&', '=', '%'], 70_000);
  const names = fc.oneof(fc.constantFrom(...SWITCH_NAMES), fc.constantFrom(...SWITCH_NAMES), hostile);
  const values = fc.oneof(
    hostile,
    fc.constantFrom('true', 'false', 'pa', 'sql', 'catalog,sql', 'agents,,', 'mindsdb', 'files', ''),
  );
  const pairs = fc.array(fc.tuple(names, values, fc.boolean()), { minLength: 1, maxLength: 4 });

  it(`answers a session or a 4xx problem naming the switch, never a 500 (seed ${SEED})`, async () => {
    // `/mcp/status` reads the same switches (the console's Connect AI view asks it what they offer).
    const paths = ['/mcp/', '/mcp/streamable', '/mcp/sse', '/mcp/status'];
    await fc.assert(
      fc.asyncProperty(pairs, fc.constantFrom(...paths), async (given, path) => {
        const query = given.map(([k, v, raw]) => `${pathSegment(k)}=${pathSegment(v, raw)}`).join('&');
        const get = path === '/mcp/sse' || path === '/mcp/status';
        const controller = new AbortController();
        const res = await fetch(`${l.url}${path}?${query}`, {
          method: get ? 'GET' : 'POST',
          signal: controller.signal,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          ...(get
            ? {}
            : {
                body: JSON.stringify({
                  jsonrpc: '2.0',
                  id: 1,
                  method: 'initialize',
                  params: {
                    protocolVersion: '2025-11-25',
                    capabilities: {},
                    clientInfo: { name: 'h', version: '1' },
                  },
                }),
              }),
        });
        try {
          expect(res.status).toBeLessThan(500);
          if (res.status === 200) {
            // A session: every switch given was one it takes.
            for (const [k] of given) expect(SWITCH_NAMES as readonly string[]).toContain(k);
            return;
          }
          expect([400, 403, 414, 431]).toContain(res.status);
          if (res.status >= 414) return;
          expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          const body = (await res.json()) as { title: string; detail: string; status: number };
          expect(body).toEqual({ title: expect.any(String), detail: expect.any(String), status: res.status });
          expect(body.detail).toMatch(/[Ss]witch|project/);
          expect(body.detail.length).toBeLessThanOrEqual(2_000);
        } finally {
          controller.abort();
          await res.body?.cancel().catch(() => undefined);
        }
      }),
      { seed: SEED, numRuns: propertyRuns(40) },
    );
    // The service still serves: a plain session opens.
    const status = await fetch(`${l.url}/mcp/status`);
    expect(status.status).toBe(200);
  });
});
