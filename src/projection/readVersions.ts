/**
 * How long an answer read from the tables stays right. Most tables change with resources (projects,
 * models, views, files); a few change with high-volume activity (MCP and LLM calls, agent runs and
 * their steps, chat messages, job runs, and the log's mirror and ledger, which every event adds to):
 * the activity tables, declared by their projections (`activity`, or `handles: 'all'`). An answer
 * that reads no activity table stays right while only activity tables change, so an assistant's
 * recorded MCP calls, or agents' runs, do not empty the caches of everyone's other reads.
 *
 * A stamp says what an answer was read from: the resource tables as a whole (every batch that
 * changes any of them moves their count, as every batch moved the one version before), and each
 * activity table it reads by that table's own version (`ProjectionRunner.tableVersion`). Equal
 * stamps, equal answers.
 */
export class ReadVersions {
  /** Batches that changed a resource table (or tables not known by name: a file's, a knowledge base's). */
  private resource = 0;

  constructor(
    readonly activityTables: ReadonlySet<string>,
    /** Moves whenever a batch changes the table (and when the tables are dropped). */
    private readonly tableVersion: (table: string) => number,
  ) {}

  /** A batch was applied; `resources`: it changed a table that is not an activity table. */
  applied(resources: boolean) {
    if (resources) this.resource++;
  }

  /** Moves with every batch that changed a resource table: what resolving names and planning read. */
  get resourceCount(): number {
    return this.resource;
  }

  /** The stamp of an answer reading the resource tables and the activity tables `reads`, now. */
  stamp(generation: number, reads: readonly string[]): string {
    return stampOf(generation, this.resource, reads.map(this.tableVersion));
  }

  /** The stamps as they are now, for an answer whose reads are known only once it is read. */
  snapshot(generation: number): (reads: readonly string[]) => string {
    const resource = this.resource;
    const versions = new Map([...this.activityTables].map((table) => [table, this.tableVersion(table)]));
    return (reads) =>
      stampOf(
        generation,
        resource,
        reads.map((table) => versions.get(table) ?? 0),
      );
  }
}

const stampOf = (generation: number, resource: number, versions: readonly number[]) =>
  `${generation}:${resource}:${versions.join(':')}`;
