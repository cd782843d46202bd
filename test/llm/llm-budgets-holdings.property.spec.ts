/**
 * What holding admitted calls promises, as a property (src/llmBudgets/state.ts `budgetHoldings`):
 * however the steps of requests started together interleave — each begins its read, reads the
 * spending the read model shows at some moment after, is admitted or refused, has its calls
 * recorded and, later, applied to the read model — the calls admitted never pass the budget's
 * limit; and once everything is applied, what is left of the limit is admitted again and nothing
 * stays held. Beside it, a kill check: holdings that let go of calls when they are recorded rather
 * than when a read has seen them applied are caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { budgetHoldings, type BudgetStanding } from '../../src/llmBudgets/state';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(300);

type Holdings = ReturnType<typeof budgetHoldings>;

/** One user's budget of `limit` calls a day, as a read that saw `spent` calls shows it. */
const standing = (limit: number, spent: number): BudgetStanding => ({
  scope: 'user',
  subject: 'u',
  callsPerDay: limit,
  tokensPerDay: null,
  callsPerQuery: null,
  setAt: '2026-01-01T00:00:00.000Z',
  callsToday: spent,
  tokensToday: 0,
});

type Step = 'begin' | 'read' | 'admit' | 'record' | 'apply';
const NEXT: Record<Step, Step | null> = {
  begin: 'read',
  read: 'admit',
  admit: 'record',
  record: 'apply',
  apply: null,
};

const world = fc.record({
  limit: fc.integer({ min: 0, max: 6 }),
  calls: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 6 }),
  // Which request moves next, each time: an index taken modulo the requests still moving.
  schedule: fc.array(fc.nat(), { minLength: 30, maxLength: 30 }),
});

/** Why a run of the world breaks the promise, or null. */
type World = { limit: number; calls: number[]; schedule: number[] };

const violation = (make: () => Holdings, w: World) => {
  const holdings = make();
  const applied = new Set<bigint>();
  let position = 0n;
  const requests = w.calls.map((calls) => ({
    calls,
    next: 'begin' as Step | null,
    read: 0,
    seen: 0,
    admitted: false,
    release: null as null | ((at: bigint | null) => void),
    at: 0n,
  }));
  /** What the read model shows as spent: the calls whose records are applied. */
  const spentInReadModel = () =>
    requests.filter((r) => r.admitted && applied.has(r.at)).reduce((n, r) => n + r.calls, 0);
  const admittedCalls = () => requests.filter((r) => r.admitted).reduce((n, r) => n + r.calls, 0);
  const move = (r: (typeof requests)[number]) => {
    switch (r.next) {
      case 'begin':
        r.read = holdings.beginRead((p) => applied.has(p));
        break;
      case 'read':
        r.seen = spentInReadModel();
        break;
      case 'admit': {
        const a = holdings.admit(
          r.read,
          [standing(w.limit, r.seen)],
          { calls: r.calls, tokens: 0, before: 0 },
          100,
        );
        if (a.refusal === null) {
          r.admitted = true;
          r.release = a.release;
        }
        if (!r.admitted) r.next = 'apply'; // refused: nothing to record
        break;
      }
      case 'record':
        r.at = ++position;
        r.release?.(r.at);
        break;
      case 'apply':
        if (r.admitted) applied.add(r.at);
        break;
      default:
        return;
    }
    r.next = r.next === null ? null : NEXT[r.next];
  };
  for (const pick of w.schedule) {
    const moving = requests.filter((r) => r.next !== null);
    if (moving.length === 0) break;
    move(moving[pick % moving.length]!);
    if (admittedCalls() > w.limit) return `admitted ${admittedCalls()} calls past a limit of ${w.limit}`;
  }
  for (const r of requests) while (r.next !== null) move(r);
  if (admittedCalls() > w.limit) return `admitted ${admittedCalls()} calls past a limit of ${w.limit}`;
  // All applied: what is left is admitted again, and nothing stays held.
  const left = w.limit - admittedCalls();
  const read = holdings.beginRead((p) => applied.has(p));
  const probe = holdings.admit(
    read,
    [standing(w.limit, spentInReadModel())],
    { calls: left, tokens: 0, before: 0 },
    100,
  );
  if (probe.refusal !== null) return `refused the ${left} calls left: ${JSON.stringify(probe.refusal)}`;
  if (holdings.size() > 1) return `${holdings.size()} holdings kept after all was applied`;
  return null;
};

describe('LLM budgets: calls admitted are held until a read sees them spent', () => {
  it('never admits calls past a limit, however requests started together interleave', () => {
    fc.assert(
      fc.property(world, (w) => violation(budgetHoldings, w) === null),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: holdings that let go of calls once recorded, not once seen applied, are caught', () => {
    const lettingGoOnRecord = (): Holdings => {
      const holdings = budgetHoldings();
      return {
        ...holdings,
        admit: (read, standings, plan, cap) => {
          const admission = holdings.admit(read, standings, plan, cap);
          if (admission.refusal !== null) return admission;
          return {
            refusal: null,
            // As if every log position were applied the moment it is recorded.
            release: (at) => {
              admission.release(at);
              holdings.abandon(holdings.beginRead(() => true));
            },
          };
        },
      };
    };
    const found = fc.check(
      fc.property(world, (w) => violation(lettingGoOnRecord, w) === null),
      { seed: SEED, numRuns: RUNS },
    );
    expect(found.failed).toBe(true);
  });
});
