import type { DuckDBConnection } from '@duckdb/node-api';
import { KB_SCHEMA, kbTableNames, type FieldType } from '../engines/search/layout';
import { quoteString } from '../shared/quoting';

/** Knowledge bases deleted: documents recorded for them after their deletion are not indexed. */
export const DELETED_KBS = `${KB_SCHEMA}.deleted_knowledge_bases`;

/** A knowledge base's content tables, by name in schema mdb_kb (layout.ts `kbTableNames`). */
const tableNames = (kbId: number) => Object.values(kbTableNames(kbId));

/** What the knowledge bases' content tables hold, as read once from DuckDB and kept up to date since. */
type Known = {
  /** The tables of schema mdb_kb. */
  readonly tables: Set<string>;
  /** The knowledge bases in the deleted list. */
  readonly deleted: Set<number>;
  /** Per knowledge base, its fields table's rows (FIELD → TYPE), once read or made. */
  readonly fields: Map<number, Map<string, FieldType | null>>;
  /** Per knowledge base whose tables were made here, while small enough: its documents and vocabulary. */
  readonly held: Map<number, HeldContent>;
};

/**
 * What the tables of a knowledge base made by this writer hold, kept as they are written (they were
 * empty when made): the documents its chunks table has chunks of, and its vocabulary (TERM → TERM_ID,
 * numbered 0, 1, … in the order appended, so the next id is its size). With them an insert neither
 * asks whether it replaces a document nor reads the vocabulary for its terms: a replay made a
 * statement of each for every insert, more than the inserts' chunks cost.
 */
export type HeldContent = {
  readonly documents: Set<string>;
  readonly vocabulary: Map<string, number>;
};

/**
 * Past this many documents and terms held in all, a knowledge base that would add more is no longer
 * held: its documents and terms are asked of DuckDB, as for tables made before this writer started.
 */
export const MAX_HELD_ENTRIES = 1_000_000;

/**
 * What one DuckDB's knowledge-base content tables hold, remembered by the projection that alone
 * writes them, so an insert does not ask the catalog, make its tables again or read the deleted list
 * and its field types each time (a rebuild spent most of its time there).
 *
 * What is remembered may stop being true when a transaction the projection wrote in is not
 * committed: its tables, deletions and fields are rolled back with it. The projection is not told
 * of commits, so it goes by the order it is applied in: after a batch is rolled back, the runner
 * reads the log again from the checkpoint, and applies again the events it applied in that batch
 * (none is passed over unless PROJECTION_SKIP names it, and then it was never applied). So an event
 * that is not past every event applied so far means something may have been rolled back, and what
 * is remembered is read from DuckDB again. (On PostgreSQL the log is read in order of transaction,
 * where a late commit can sit below a position already applied: it too makes the tables be read
 * again, which costs a query and is never wrong.) Dropping or making the tables (a rebuild) forgets
 * everything, as does an apply that fails.
 */
export class KnownContentTables {
  private known: Known | null = null;
  /** The highest position applied since the tables were made. */
  private latest = -1n;
  /** The documents and terms held in all (`Known.held`). */
  private heldEntries = 0;

  /** `maxHeldEntries`: 0 holds none (every answer asked of DuckDB). */
  constructor(private readonly maxHeldEntries = MAX_HELD_ENTRIES) {}

  /** Whether what the tables hold is remembered (else it is read from DuckDB when next asked). */
  get loaded(): boolean {
    return this.known !== null;
  }

  /** Before applying the event at `position`. */
  applying(position: bigint) {
    if (position <= this.latest) this.known = null;
    else this.latest = position;
  }

  /** The tables were dropped or made, or an apply failed part way: nothing remembered holds. */
  forget() {
    this.known = null;
    this.heldEntries = 0;
  }

  /** The tables were dropped or made: the log is applied from its start again. */
  reset() {
    this.forget();
    this.latest = -1n;
  }

  private async read(c: DuckDBConnection): Promise<Known> {
    if (this.known) return this.known;
    const tables = (
      await c.runAndReadAll(
        `SELECT table_name FROM duckdb_tables() WHERE schema_name = ${quoteString(KB_SCHEMA)}`,
      )
    )
      .getRows()
      .map((r) => String(r[0]));
    const deleted = (await c.runAndReadAll(`SELECT KB_ID FROM ${DELETED_KBS}`))
      .getRows()
      .map((r) => Number(r[0]));
    this.known = { tables: new Set(tables), deleted: new Set(deleted), fields: new Map(), held: new Map() };
    this.heldEntries = 0;
    return this.known;
  }

  async isDeleted(c: DuckDBConnection, kbId: number): Promise<boolean> {
    return (await this.read(c)).deleted.has(kbId);
  }

  /** Whether the knowledge base's chunks table exists. */
  async hasChunks(c: DuckDBConnection, kbId: number): Promise<boolean> {
    return (await this.read(c)).tables.has(kbTableNames(kbId).chunks);
  }

  /** Whether any of the knowledge base's tables exists. */
  async hasTables(c: DuckDBConnection, kbId: number): Promise<boolean> {
    const known = await this.read(c);
    return tableNames(kbId).some((n) => known.tables.has(n));
  }

  /**
   * Notes the knowledge base's tables as made, for the caller to make in this apply when `missing`
   * (an apply that fails forgets everything noted); `hadChunks`: whether its chunks table was there
   * before (when it was not, it holds no document to replace); `hadNone`: whether none of them was.
   */
  async noteTables(
    c: DuckDBConnection,
    kbId: number,
  ): Promise<{ hadChunks: boolean; missing: boolean; hadNone: boolean }> {
    const known = await this.read(c);
    const names = tableNames(kbId);
    const hadChunks = known.tables.has(kbTableNames(kbId).chunks);
    if (names.every((n) => known.tables.has(n))) return { hadChunks, missing: false, hadNone: false };
    const hadFields = known.tables.has(kbTableNames(kbId).fields);
    const hadNone = names.every((n) => !known.tables.has(n));
    for (const n of names) known.tables.add(n);
    if (!hadFields) known.fields.set(kbId, new Map());
    if (hadNone && this.maxHeldEntries > 0)
      known.held.set(kbId, { documents: new Set(), vocabulary: new Map() });
    return { hadChunks, missing: true, hadNone };
  }

  /** What the knowledge base's tables hold, when they were made here and are held still (else undefined: ask DuckDB). */
  held(kbId: number): HeldContent | undefined {
    return this.known?.held.get(kbId);
  }

  /**
   * Documents and terms just appended to a held knowledge base's tables (`terms` new to its
   * vocabulary, numbered on from its size). Past the bound, it is held no longer.
   */
  appended(kbId: number, documents: Iterable<string>, terms: readonly string[]) {
    const held = this.held(kbId);
    if (!held) return;
    const before = held.documents.size + held.vocabulary.size;
    for (const id of documents) held.documents.add(id);
    for (const term of terms) held.vocabulary.set(term, held.vocabulary.size);
    this.heldEntries += held.documents.size + held.vocabulary.size - before;
    if (this.heldEntries > this.maxHeldEntries) this.release(kbId);
  }

  /** Documents deleted from a held knowledge base's tables. */
  removed(kbId: number, documents: readonly string[]) {
    const held = this.held(kbId);
    if (!held) return;
    const before = held.documents.size;
    for (const id of documents) held.documents.delete(id);
    this.heldEntries -= before - held.documents.size;
  }

  /** The knowledge base is held no longer. */
  private release(kbId: number) {
    const held = this.held(kbId);
    if (!held) return;
    this.heldEntries -= held.documents.size + held.vocabulary.size;
    this.known!.held.delete(kbId);
  }

  /** The knowledge base's fields table's rows (its tables exist). */
  async fields(
    c: DuckDBConnection,
    kbId: number,
    readRows: () => Promise<Map<string, FieldType | null>>,
  ): Promise<Map<string, FieldType | null>> {
    const known = await this.read(c);
    let fields = known.fields.get(kbId);
    if (!fields) {
      fields = await readRows();
      known.fields.set(kbId, fields);
    }
    return fields;
  }

  /** The knowledge base's tables were dropped and it was put on the deleted list. */
  async deleted(c: DuckDBConnection, kbId: number) {
    const known = await this.read(c);
    for (const n of tableNames(kbId)) known.tables.delete(n);
    known.fields.delete(kbId);
    this.release(kbId);
    known.deleted.add(kbId);
  }
}
