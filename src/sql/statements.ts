import type { SqlPorts } from './ports';
import { resourceName } from '../shared/names';
import { DomainError, invalid } from '../shared/errors';
import type { Params } from '../shared/params';
import { SqlError, SqlErrorCode } from './errors';
import type { MindsStatement, Options, QualifiedName, UsingValue } from './parse';

import type { OkAnswer } from './answers';
const ok: OkAnswer = { type: 'ok', affected_rows: null };

const validName = (what: string, name: string) => {
  const r = resourceName(what).safeParse(name);
  if (!r.success) throw invalid(r.error.issues.map((i) => i.message).join('; '));
  return name;
};

const asString = (key: string, v: UsingValue | undefined): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw invalid(`${key} must be a text value`);
};

const asObject = (key: string, v: UsingValue): Params => {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v;
  throw invalid(`${key} must be a JSON object`);
};

const asSkillRefs = (key: string, v: UsingValue | undefined) => {
  if (v === undefined) return undefined;
  const list = Array.isArray(v) ? v : [v];
  return list.map((item) => {
    if (typeof item === 'string' || typeof item === 'number') return { ref: String(item), parameters: {} };
    if (item && typeof item === 'object' && !Array.isArray(item) && typeof item.name === 'string') {
      const { name, ...parameters } = item;
      return { ref: name, parameters };
    }
    throw invalid(`${key} must list skill names or {"name": …} objects`);
  });
};

/** Splits `USING`/`SET` options into an agent's fields (MindsDB's SQL shape) and its params. */
const agentOptions = (options: Options) => {
  const { model, provider, skills, skills_to_add, skills_to_remove, name, ...params } = options;
  const out: {
    name?: string;
    modelName?: string | null;
    provider?: string | null;
    params: Params;
    skills?: { ref: string; parameters: Params }[];
    skillsToAdd?: { ref: string; parameters: Params }[];
    skillsToRemove?: string[];
  } = { params: { ...params } };
  if (typeof model === 'string') out.modelName = model;
  else if (model !== undefined && model !== null) out.params.model = asObject('model', model);
  if (provider !== undefined) out.provider = asString('provider', provider) ?? null;
  if (name !== undefined) out.name = asString('name', name);
  out.skills = asSkillRefs('skills', skills);
  out.skillsToAdd = asSkillRefs('skills_to_add', skills_to_add);
  out.skillsToRemove = asSkillRefs('skills_to_remove', skills_to_remove)?.map((r) => r.ref);
  return out;
};

const isNotFound = (e: unknown) => e instanceof DomainError && e.kind === 'NotFound';

/**
 * MindsDB's statements, run through the same services (and so the same deciders, events and
 * validation) as the REST endpoints: a resource made in SQL is at once visible over REST.
 */
export const runMindsStatement = async (
  services: SqlPorts,
  statement: Exclude<
    MindsStatement,
    {
      kind:
        | 'Show'
        | 'Describe'
        | 'Use'
        | 'Set'
        | 'CreateModel'
        | 'RetrainModel'
        | 'FinetuneModel'
        | 'DropModel'
        | 'CreateKnowledgeBase'
        | 'DropKnowledgeBase'
        | 'Insert'
        | 'Delete'
        | 'CreateJob'
        | 'DropJob'
        | 'CreateView'
        | 'AlterView'
        | 'DropView'
        | 'CreateTable'
        | 'UpdateTable'
        | 'DropTable'
        | 'CreateTrigger'
        | 'DropTrigger';
    }
  >,
  db: string,
): Promise<OkAnswer> => {
  const projectOf = (name: QualifiedName) => name.project ?? db;
  switch (statement.kind) {
    case 'CreateProject': {
      if (statement.ifNotExists && (await services.projects.find(statement.name))) return ok;
      await services.projects.create(validName('Project', statement.name));
      return ok;
    }
    case 'DropProject': {
      if (statement.ifExists && !(await services.projects.find(statement.name))) return ok;
      await services.projects.remove(statement.name);
      return ok;
    }
    case 'CreateDatabase': {
      if (statement.ifNotExists && (await services.databases.exists(statement.name))) return ok;
      if (!statement.engine) {
        // A database without an engine is a project, as in MindsDB.
        await services.projects.create(validName('Project', statement.name));
        return ok;
      }
      await services.databases.create({
        name: validName('Database', statement.name),
        engine: statement.engine,
        parameters: statement.parameters ?? {},
      });
      return ok;
    }
    case 'DropDatabase': {
      if (statement.ifExists && !statement.forget && !(await services.databases.exists(statement.name)))
        return ok;
      try {
        await services.databases.remove(statement.name, undefined, { forget: statement.forget });
      } catch (error) {
        if (!(statement.ifExists && isNotFound(error))) throw error;
      }
      return ok;
    }
    case 'CreateResource': {
      const project = projectOf(statement.name);
      const name = statement.name.name;
      const o = statement.options;
      if (statement.resource === 'skill') {
        if (statement.ifNotExists && (await exists(() => services.skills.get(project, name)))) return ok;
        const { type, ...params } = o;
        const skillType = asString('type', type);
        if (!skillType)
          throw invalid(`CREATE SKILL needs USING type = 'sql' | 'knowledge_base' | 'retrieval' | …`);
        await services.skills.run(project, { type: 'CreateSkill', data: { name, type: skillType, params } });
        return ok;
      }
      if (statement.resource === 'agent') {
        if (statement.ifNotExists && (await exists(() => services.agents.get(project, name)))) return ok;
        const a = agentOptions(o);
        await services.agents.run(project, {
          type: 'CreateAgent',
          data: {
            name,
            modelName: a.modelName ?? null,
            provider: a.provider ?? null,
            params: a.params,
            skills: a.skills ?? [],
          },
        });
        return ok;
      }
      if (statement.ifNotExists && (await exists(() => services.chatbots.get(project, name)))) return ok;
      const { database, agent, model, is_running, ...params } = o;
      const dbName = asString('database', database);
      if (!dbName) throw invalid(`CREATE CHATBOT needs USING database = '<chat database>'`);
      await services.chatbots.run(project, {
        type: 'CreateChatbot',
        data: {
          name,
          agentRef: asString('agent', agent) ?? null,
          modelName: asString('model', model) ?? null,
          database: await services.databases.requireIntegration({ name: dbName }),
          // SQL's default, as MindsDB (REST's is false).
          isRunning: is_running === undefined ? true : Boolean(is_running),
          params,
        },
      });
      return ok;
    }
    case 'UpdateResource': {
      const project = projectOf(statement.name);
      const name = statement.name.name;
      const o = statement.options;
      if (statement.resource === 'skill') {
        await services.skills.get(project, name);
        const { type, name: rename, ...params } = o;
        await services.skills.run(project, {
          type: 'PutSkill',
          data: { ref: name, name: asString('name', rename), type: asString('type', type), params },
        });
        return ok;
      }
      if (statement.resource === 'agent') {
        const a = agentOptions(o);
        await services.agents.run(project, {
          type: 'UpdateAgent',
          data: {
            ref: name,
            name: a.name,
            modelName: a.modelName,
            provider: a.provider,
            params: Object.keys(a.params).length ? a.params : undefined,
            skills: a.skills,
            skillsToAdd: a.skillsToAdd,
            skillsToRemove: a.skillsToRemove,
          },
        });
        return ok;
      }
      await services.chatbots.get(project, name);
      const { database, agent, model, is_running, name: rename, ...params } = o;
      const dbName = asString('database', database);
      await services.chatbots.run(project, {
        type: 'PutChatbot',
        data: {
          ref: name,
          name: asString('name', rename),
          agentRef: agent === undefined ? undefined : (asString('agent', agent) ?? null),
          modelName: model === undefined ? undefined : (asString('model', model) ?? null),
          database: dbName ? await services.databases.requireIntegration({ name: dbName }) : undefined,
          isRunning: is_running === undefined ? undefined : Boolean(is_running),
          params: Object.keys(params).length ? params : undefined,
        },
      });
      return ok;
    }
    case 'DropResource': {
      const project = projectOf(statement.name);
      const ref = statement.name.name;
      try {
        const options = { forget: statement.forget };
        if (statement.resource === 'skill')
          await services.skills.run(project, { type: 'DeleteSkill', data: { ref } }, options);
        else if (statement.resource === 'agent')
          await services.agents.run(project, { type: 'DeleteAgent', data: { ref } }, options);
        else await services.chatbots.run(project, { type: 'DeleteChatbot', data: { ref } }, options);
      } catch (error) {
        if (!(statement.ifExists && isNotFound(error))) throw error;
      }
      return ok;
    }
    case 'CreateMlEngine':
      await services.mlEngines.create({
        name: validName('ML engine', statement.name),
        handler: statement.handler,
        parameters: statement.options,
        ifNotExists: statement.ifNotExists,
      });
      return ok;
    case 'DropMlEngine':
      await services.mlEngines.remove(statement.name, statement.ifExists, { forget: statement.forget });
      return ok;
    default: {
      const _exhaustive: never = statement;
      throw new SqlError(SqlErrorCode.Internal, `Unhandled statement ${JSON.stringify(_exhaustive)}`);
    }
  }
};

const exists = async (get: () => Promise<unknown>) => {
  try {
    await get();
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
};
