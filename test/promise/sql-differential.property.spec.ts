import fc from 'fast-check';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { asMultiset, checkQuery, PARAMS, query, render, usesParam, type Query } from '../support/promise-sql';
import {
  applyAll,
  applyCommand,
  describeCommand,
  quickCommand,
  startingWorld,
  type Command,
  propertySettings,
  PROPERTY_TIMEOUT_MS,
} from '../support/promise-world';

/** A fresh seed each run, printed: PROMISE_SEED repeats a failure (PROMISE_RUNS, PROMISE_SCALE run more). */
const SETTINGS = propertySettings(12);

type Step =
  /** A write, after which every one of the run's texts is asked again (`:v` bound to `param`). */
  { kind: 'write'; command: Command; param: string } | { kind: 'once'; query: Query; param: string };

const param = fc.constantFrom(...PARAMS);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('write' as const), command: quickCommand, param }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('once' as const), query, param }) },
);

/**
 * The promise for SQL: a SELECT answers exactly what the same query run afresh would, whatever the
 * endpoint cached. The endpoint keeps parsed queries, DuckDB prepared statements (per data epoch)
 * and whole answers (per projection version); the reference runs the same query, over the views
 * MindsDB's names stand for, on a new DuckDB connection. Each run fixes a few query texts and asks
 * every one over empty tables, over a generated starting world, and again after each generated
 * write (new rows, renames, deletes, strings longer than any seen before), with other queries and
 * other parameter values in between: the same text is answered across many data epochs.
 */
describe.each(storeKinds)('SQL answers equal a fresh DuckDB connection’s (%s)', (kind) => {
  it(
    'given generated SELECTs repeated across generated writes, then every answer equals DuckDB’s on a fresh connection',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          startingWorld,
          fc.array(query, { minLength: 2, maxLength: 6 }),
          fc.array(step, { maxLength: 24, size: 'max' }),
          async (world, texts, steps) => {
            const t: TestApp = await startTestApp(kind);
            const transcript: string[] = [];
            const check = async (q: Query, value: string) => {
              const result = await checkQuery(t, q, value);
              if (!result.ok)
                throw new Error(`${result.message}\n\nwrites and queries so far:\n${transcript.join('\n')}`);
              transcript.push(`  query ${render(q, 'client', value)}`);
              await checkOtherText(q, value);
            };
            /**
             * The same query in another text (a closing comment, a parameter it does not use), which
             * the answer cache finds by its rewritten text: it answers what the text just checked
             * answers (at the same read-model version: nothing is written in between).
             */
            const checkOtherText = async (q: Query, value: string) => {
              const text = render(q, 'client', value);
              const ask = (sql: string, params: Record<string, unknown>) =>
                querySql(t, sql, { context: { db: q.db }, params });
              const params = usesParam(q) ? { v: value } : {};
              const [checked, other] = [
                await ask(text, params),
                await ask(`${text} /* another text */`, { ...params, unused: value }),
              ];
              const shape = (a: typeof checked) => ({
                type: a.type,
                error_code: a.error_code,
                column_names: a.column_names,
                column_types: a.column_types,
                rows: asMultiset(a.data ?? []),
              });
              if (JSON.stringify(shape(other)) !== JSON.stringify(shape(checked)))
                throw new Error(
                  `another text of ${text} answered otherwise: ${JSON.stringify(shape(other))}, not ${JSON.stringify(shape(checked))}\n\nwrites and queries so far:\n${transcript.join('\n')}`,
                );
            };
            try {
              // First over empty tables (a plan made there expects no rows and no strings), then over
              // the starting world, then between writes.
              for (const q of texts) await check(q, PARAMS[0]);
              transcript.push(...(await applyAll([t], world)).transcript);
              await t.running.services.models.idle();
              for (const q of texts) await check(q, PARAMS[0]);
              for (const s of steps) {
                if (s.kind === 'once') {
                  await check(s.query, s.param);
                  continue;
                }
                const outcome = await applyCommand(t, s.command);
                transcript.push(`${describeCommand(s.command)} -> ${outcome.sql?.type ?? outcome.status}`);
                for (const q of texts) await check(q, s.param);
              }
            } finally {
              await t.running.services.models.idle();
              await t.dispose();
            }
          },
        ),
        SETTINGS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
