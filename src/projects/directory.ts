import type { Aggregate } from '../eventlog/commands';
import type { ReadCache } from '../shared/readCache';
import { notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import type { TableReader } from '../projection/types';
import { projectAggregate, type ProjectAggregate } from './aggregate';
import { presentProject, type PresentedProject } from './present';
import { projectRowByName, projectRows } from './projection';

/**
 * How everything that lives in a project finds it: by name (case-insensitive), or a 404 in
 * MindsDB's words. Every resource's service is given one, rather than the projects service.
 */
export type ProjectDirectory = {
  find(name: string): Promise<PresentedProject | undefined>;
  require(name: string): Promise<PresentedProject>;
  list(): Promise<PresentedProject[]>;
  /** A route's `before`: 404 when the project its path names does not exist. */
  guard(input: { readonly params: { readonly project: string } }): Promise<void>;
  /**
   * Folds a project's stream. Handed to the slices here, not imported by them: it is assembled from
   * their own states (./slices.ts), and importing it would tie every slice's folder into a cycle.
   */
  readonly aggregate: Aggregate<ProjectAggregate>;
};

export const projectDirectory = (reader: TableReader, cached: ReadCache): ProjectDirectory => {
  const find = (name: string) =>
    cached(`project:${nameKey(name)}`, async () => {
      const row = await projectRowByName(reader, name);
      return row ? presentProject(row) : undefined;
    });
  const require = async (name: string) => {
    const project = await find(name);
    if (!project) throw notFound(`Project name ${name} does not exist`, 'Project not found');
    return project;
  };
  return {
    find,
    require,
    guard: async ({ params }) => {
      await require(params.project);
    },
    list: () => cached('projects', async () => (await projectRows(reader)).map(presentProject)),
    aggregate: projectAggregate,
  };
};
