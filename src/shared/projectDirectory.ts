import type { Aggregate } from './aggregate';
import type { ProjectAggregate } from './projectState';

/** A project as every resource's service sees it (src/projects/present.ts makes it). */
export type ProjectEntry = { id: number; name: string; created_at: string; version: bigint };

/**
 * How everything that lives in a project finds it: by name (case-insensitive), or a 404 in
 * MindsDB's words. Every resource's service is given one (src/projects/directory.ts makes it),
 * rather than the projects service.
 */
export type ProjectDirectory = {
  find(name: string): Promise<ProjectEntry | undefined>;
  require(name: string): Promise<ProjectEntry>;
  list(): Promise<ProjectEntry[]>;
  /** A route's `before`: 404 when the project its path names does not exist. */
  guard(input: { readonly params: { readonly project: string } }): Promise<void>;
  /**
   * Folds a project's stream. Handed to the slices here, not imported by them: it is assembled from
   * their own states (src/projects/slices.ts), and importing it would tie every slice's folder into
   * a cycle.
   */
  readonly aggregate: Aggregate<ProjectAggregate>;
};
