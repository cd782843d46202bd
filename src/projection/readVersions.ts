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
 * activity table it reads by its own count. Equal stamps, equal answers.
 */
export class ReadVersions {
  /** Batches that changed a resource table (or tables not known by name: a file's, a knowledge base's). */
  private resource = 0;
  private readonly activity = new Map<string, number>();

  constructor(readonly activityTables: ReadonlySet<string>) {}

  /** A batch was applied that changed `changed` (`'all'`: tables not all known by name). */
  applied(changed: ReadonlySet<string> | 'all') {
    if (changed === 'all') {
      this.resource++;
      for (const table of this.activityTables) this.bump(table);
      return;
    }
    let resource = false;
    for (const table of changed)
      if (this.activityTables.has(table)) this.bump(table);
      else resource = true;
    if (resource) this.resource++;
  }

  private bump(table: string) {
    this.activity.set(table, (this.activity.get(table) ?? 0) + 1);
  }

  /** Moves with every batch that changed a resource table: what resolving names and planning read. */
  get resourceCount(): number {
    return this.resource;
  }

  /** The stamp of an answer reading the resource tables and the activity tables `reads`, now. */
  stamp(generation: number, reads: readonly string[]): string {
    return stampOf(generation, this.resource, this.activity, reads);
  }

  /** The stamps as they are now, for an answer whose reads are known only once it is read. */
  snapshot(generation: number): (reads: readonly string[]) => string {
    const resource = this.resource;
    const activity = new Map(this.activity);
    return (reads) => stampOf(generation, resource, activity, reads);
  }

  /** The activity tables among `names` (a query's words, lower-case), in a fixed order. */
  activityNamed(names: ReadonlySet<string>): string[] {
    return [...this.activityTables].filter((table) => names.has(table));
  }
}

const stampOf = (
  generation: number,
  resource: number,
  activity: ReadonlyMap<string, number>,
  reads: readonly string[],
) => {
  let stamp = `${generation}:${resource}`;
  for (const table of reads) stamp += `:${activity.get(table) ?? 0}`;
  return stamp;
};
