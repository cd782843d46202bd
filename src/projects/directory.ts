import type { ReadCache } from '../shared/readCache';
import { notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import type { TableReader } from '../projection/types';
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
};

export const projectDirectory = (reader: TableReader, cached: ReadCache): ProjectDirectory => {
  const find = (name: string) =>
    cached(`project:${nameKey(name)}`, async () => {
      const row = await projectRowByName(reader, name);
      return row ? presentProject(row) : undefined;
    });
  return {
    find,
    require: async (name) => {
      const project = await find(name);
      if (!project) throw notFound(`Project name ${name} does not exist`, 'Project not found');
      return project;
    },
    list: () => cached('projects', async () => (await projectRows(reader)).map(presentProject)),
  };
};
