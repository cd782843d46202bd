import type { CatalogResolver } from '../catalog/catalog';
import { catalogFaceOf } from '../catalog/catalogListing';
import { nameKey } from '../../shared/names';
import type { PlanDependencies } from './statementCache';

/**
 * The read-model tables that say whether a name is a project's object, per look-up of the catalog
 * (src/sql/catalog/catalog.ts and the slices' `SqlLookups`): a project's row, then its models
 * (a version activated or retrained moves `models`), agents, knowledge bases or views; an
 * integration's row; an uploaded file's row (a file replaced rewrites it). `projects` is in every
 * entry: each look-up of a project's object asks first whether its database is a project.
 */
export const NAME_TABLES = {
  project: ['projects'],
  integration: ['databases'],
  file: ['files'],
  model: ['projects', 'models'],
  agent: ['projects', 'agents'],
  knowledgeBase: ['projects', 'knowledge_bases'],
  view: ['projects', 'views'],
} as const satisfies Record<string, readonly string[]>;
type NameLookup = keyof typeof NAME_TABLES;

/** The tables each look-up's answer comes from (`NAME_TABLES`), asked through one method: a kill check replaces it. */
export const nameTables = {
  of: (lookup: NameLookup): readonly string[] => NAME_TABLES[lookup],
};

/**
 * `catalog` as planning reads it, each look-up noting in `dependencies` the tables its answer came
 * from (before it is made: a table changed while it is made is seen moved). What no table's version
 * says is noted as every resource table (`everything`): information_schema.COLUMNS (planning it
 * fills the object-columns table as the objects are now) and TABLES (their listings name the
 * registered databases), a scoped caller's information_schema (views made for its project), and
 * AS OF.
 */
export const planCatalog = (catalog: CatalogResolver, dependencies: PlanDependencies): CatalogResolver => {
  /** `lookUp`, noting first the tables `lookup`'s answer comes from. */
  const noting =
    <A extends unknown[], R>(lookup: NameLookup, lookUp: (...args: A) => R) =>
    (...args: A): R => {
      dependencies.note(nameTables.of(lookup));
      return lookUp(...args);
    };
  return {
    ...catalog,
    resolve: (database, table, c, scope = null) => {
      const db = nameKey(database);
      if (scope !== null || (db === 'information_schema' && catalogFaceOf(table))) dependencies.everything();
      // Any other name of information_schema is fixed; elsewhere the database is asked whether it
      // is a project, then (`files.x`) whether the file is uploaded, then whether it is an integration.
      else if (db !== 'information_schema')
        dependencies.note([
          ...nameTables.of('project'),
          ...nameTables.of('file'),
          ...nameTables.of('integration'),
        ]);
      return catalog.resolve(database, table, c, scope);
    },
    asOf: (...args) => {
      dependencies.everything();
      return catalog.asOf(...args);
    },
    integration: noting('integration', catalog.integration),
    model: noting('model', catalog.model),
    agent: noting('agent', catalog.agent),
    knowledgeBase: noting('knowledgeBase', catalog.knowledgeBase),
    view: noting('view', catalog.view),
  };
};
