import type { SkillsService } from './service';
import { invalid } from '../shared/errors';
import {
  ownProject,
  exists,
  ok,
  optionText,
  projectOf,
  dropByName,
  type SqlCatalog,
  type StatementHandlers,
} from '../sql/handlers';

/** CREATE SKILL, UPDATE / ALTER SKILL and DROP SKILL [FORGET], through the skills service (as REST). */
export const skillStatements = (skills: Pick<SkillsService, 'get' | 'run'>) =>
  ({
    CreateSkill: async (statement, context) => {
      const project = projectOf(statement.name, context);
      const name = statement.name.name;
      if (statement.ifNotExists && (await exists(() => skills.get(project, name)))) return ok;
      const { type, ...params } = statement.options;
      const skillType = optionText('type', type);
      if (!skillType)
        throw invalid(`CREATE SKILL needs USING type = 'sql' | 'knowledge_base' | 'retrieval' | …`);
      await skills.run(project, { type: 'CreateSkill', data: { name, type: skillType, params } });
      return ok;
    },
    UpdateSkill: async (statement, context) => {
      const project = projectOf(statement.name, context);
      const name = statement.name.name;
      await skills.get(project, name);
      const { type, name: rename, ...params } = statement.options;
      await skills.run(project, {
        type: 'PutSkill',
        data: { ref: name, name: optionText('name', rename), type: optionText('type', type), params },
      });
      return ok;
    },
    DropSkill: dropByName((project, ref, forget) =>
      skills.run(project, { type: 'DeleteSkill', data: { ref } }, { forget }),
    ),
  }) satisfies StatementHandlers<'CreateSkill' | 'UpdateSkill' | 'DropSkill'>;

/** information_schema.SKILLS, and every project's skills table. */
export const skillCatalog = {
  informationSchema: {
    SKILLS: `SELECT NAME, PROJECT, TYPE, CAST(PARAMS AS VARCHAR) AS PARAMS FROM main.skills ORDER BY ID`,
  },
  projectTables: { skills: 'SKILLS' },
  scopedRows: { skills: ownProject },
} satisfies SqlCatalog;
