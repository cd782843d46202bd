import type { SkillsService } from './service';
import { invalid } from '../shared/errors';
import {
  createByName,
  dropByName,
  optionText,
  ownProject,
  updateByName,
  type SqlCatalog,
  type StatementHandlers,
} from '../sql/handlers';

/** CREATE SKILL, UPDATE / ALTER SKILL and DROP SKILL [FORGET], through the skills service (as REST). */
export const skillStatements = (skills: Pick<SkillsService, 'get' | 'run'>) =>
  ({
    CreateSkill: createByName(skills.get, async (project, name, options) => {
      const { type, ...params } = options;
      const skillType = optionText('type', type);
      if (!skillType)
        throw invalid(`CREATE SKILL needs USING type = 'sql' | 'knowledge_base' | 'retrieval' | …`);
      await skills.run(project, { type: 'CreateSkill', data: { name, type: skillType, params } });
    }),
    UpdateSkill: updateByName(skills.get, async (project, name, options) => {
      const { type, name: rename, ...params } = options;
      await skills.run(project, {
        type: 'PutSkill',
        data: { ref: name, name: optionText('name', rename), type: optionText('type', type), params },
      });
    }),
    DropSkill: dropByName((project, ref, _ifExists, options) =>
      skills.run(project, { type: 'DeleteSkill', data: { ref } }, options),
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
