import type { ReadCache } from '../shared/readCache';
import { projectNotFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import type { TableReader } from '../projection/types';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { projectAggregate } from './aggregate';
import { presentProject } from './present';
import { projectRowByName, projectRows } from './projection';

export const projectDirectory = (reader: TableReader, cached: ReadCache): ProjectDirectory => {
  const find = (name: string) =>
    cached(`project:${nameKey(name)}`, async () => {
      const row = await projectRowByName(reader, name);
      return row ? presentProject(row) : undefined;
    });
  const require = async (name: string) => {
    const project = await find(name);
    if (!project) throw projectNotFound(name);
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
