import type { AppContext } from '../../context';
import { StampedCache } from '../../shared/stampedCache';
import type { TableAnswer } from '../answers';
import type { SqlObserver } from '../observer';
import type { SelectInput } from './select';
import { activityTablesReadBy, isReusableAnswer } from './statementCache';

/** What of a rewritten SELECT its answer depends on besides the database and the parameters. */
type RewrittenText = Pick<SelectInput, 'sql' | 'placeholders' | 'positional' | 'natives' | 'predictOptions'>;

/** The stamps of the tables an answer read, taken before its read began (`readStampsNow`). */
type StampsThen = (reads: readonly string[]) => string;

/**
 * The one cache of answers (metrics label `answer`), each for the stamp of the tables it read
 * (src/projection/readVersions.ts): until a batch changes a resource table or an activity table
 * the query reads, the same query gives the same answer (for what `isReusableAnswer` admits,
 * src/sql/pipeline/statementCache.ts: deterministic local queries, read under no table policy, of at most
 * MAX_CACHED_ROWS rows and MAX_CACHED_BYTES bytes). Each answer is kept for the stamps read
 * before its query started (`set` refuses it if they moved since), under two keys:
 *   - its text as the client sent it, database and parameters (`sentKey`): a repeated SELECT
 *     (a dashboard polling, over HTTP or MySQL) skips even the rewriting and takes no reader;
 *   - its text as rewritten for DuckDB (`rewrittenKey`: comments, MySQL's quoting and blanks
 *     around it gone), with the database and the parameters it binds: the same query in another
 *     text (a comment naming the request), or sent a parameter it does not use, skips planning
 *     and DuckDB. SHOW's and DESCRIBE's SELECTs (`internal`) are kept by it too.
 * A caller under a role's policy neither reads nor fills it: a cached answer was someone else's.
 * Rows read with other limits (training, INSERT … SELECT, agents' tools) are neither (the purposes
 * table of src/sql/pipeline/query.ts says which reads use it).
 * Below it nothing holds answers, only work: the plan cache (`prepared.queries`, label
 * `statement`, per version of the tables their names were resolved from: SELECTs parsed, resolved and
 * planned, src/sql/pipeline/planCatalog.ts) and DuckDB's
 * prepared statements (`readDeterministic`, src/sql/pipeline/statementCache.ts: per pooled connection and
 * data epoch); a SELECT that misses here is read by DuckDB.
 * 700 entries: the 500 and 200 of the two answer caches this one replaced (issue 38).
 */
export const answerCache = (ctx: Pick<AppContext, 'projections' | 'ownWrites'>, observer: SqlObserver) => {
  const answers = new StampedCache<TableAnswer>((reads) => ctx.projections.readStamp(reads), 700);

  /** Per answer's reads (one array per answer), the activity tables it did not read: made once. */
  const unread = new WeakMap<readonly string[], ReadonlySet<string>>();
  const activityTablesNotIn = (reads: readonly string[]) => {
    let tables = unread.get(reads);
    if (!tables)
      unread.set(
        reads,
        (tables = new Set([...ctx.projections.activityTables].filter((table) => !reads.includes(table)))),
      );
    return tables;
  };

  return {
    /** The key of a SELECT's text as the client sent it. */
    sentKey: (sql: string, db: string, params: Record<string, unknown>) =>
      `${db}\u0000${sql}\u0000${JSON.stringify(params)}`,

    /**
     * The key of a SELECT as rewritten for DuckDB: everything of the rewritten text `runSelect`
     * reads, and the parameters its placeholders bind (`bindParameters` reads no other: one sent
     * but unused changes nothing); none for values JSON cannot spell (a BigInt), which are read
     * afresh. Blanks around the statement (where a closing comment was) change nothing it answers.
     */
    rewrittenKey: (db: string, text: RewrittenText, params: Record<string, unknown>): string | undefined => {
      const bound = [...new Set(text.placeholders)].map((name) =>
        !(name in params) ? 'missing' : params[name] === undefined ? 'undefined' : [params[name]],
      );
      try {
        return `\u0001${db}\u0000${text.sql.trim()}\u0000${JSON.stringify([
          text.placeholders,
          text.positional ?? 0,
          [...(text.natives ?? [])],
          text.predictOptions ?? null,
          bound,
        ])}`;
      } catch {
        return undefined;
      }
    },

    /** The answer kept under the rewritten text's key (counted: the look-up a SELECT's hit or miss is). */
    knownRewritten: (key: string | undefined) => {
      if (key === undefined) return undefined;
      const known = answers.get(key);
      observer.cacheLookup('answer', known !== undefined);
      return known;
    },

    /** Keeps a reusable answer under each of its keys, for the tables' stamps when its read began. */
    keep: (answer: TableAnswer, stampsThen: StampsThen, ...keys: (string | undefined)[]) => {
      if (!isReusableAnswer(answer)) return;
      const reads = activityTablesReadBy(answer);
      for (const key of keys) if (key !== undefined) answers.set(key, answer, reads, stampsThen);
    },

    /**
     * The answer kept under `key` once this process's writes answered ahead to what it read are
     * applied (read-your-writes), if they left it as it was. It waits for writes to the resource
     * tables and to the activity tables it read, not for others' (an MCP call's own record).
     */
    knownAfterOwnWrites: async (key: string): Promise<TableAnswer | undefined> => {
      const entry = answers.entry(key);
      if (!entry) return undefined;
      const waiting = ctx.ownWrites({ allBut: activityTablesNotIn(entry.reads) });
      if (!waiting) return entry.value;
      await waiting;
      return answers.get(key);
    },
  };
};

export type AnswerCache = ReturnType<typeof answerCache>;

/** Every write this process answered before a statement is applied (read-your-writes). */
export const ownWritesApplied = async (ctx: Pick<AppContext, 'ownWrites'>) => {
  const waiting = ctx.ownWrites('all');
  if (waiting) await waiting;
};
