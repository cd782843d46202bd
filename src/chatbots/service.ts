import type { AgentsService } from '../agents/service';
import { settled, type AppContext } from '../context';
import type { DatabasesService } from '../databases/service';
import { projectAggregate, projectStream } from '../projects/aggregate';
import type { ProjectsService } from '../projects/service';
import { invalid, notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { toMindsDbTimestamp } from '../shared/time';
import { decideChatbot, isChatbotRef, type ChatbotCommand, type ChatDatabase } from './decider';

type ChatbotRow = {
  ID: bigint;
  NAME: string;
  PROJECT: string;
  PROJECT_ID: bigint;
  DATABASE: string | null;
  DATABASE_ID: bigint | null;
  AGENT_ID: bigint | null;
  MODEL_NAME: string | null;
  PARAMS: string;
  IS_RUNNING: boolean;
  LAST_ERROR: string | null;
  WEBHOOK_TOKEN: string | null;
  CREATED_AT: Date;
  UPDATED_AT: Date;
  VERSION: bigint;
};

const num = (v: bigint | null) => (v === null ? null : Number(v));

export const chatbotsService = (
  ctx: AppContext,
  projects: ProjectsService,
  agents: AgentsService,
  databases: DatabasesService,
) => {
  const rowsOf = (projectName: string) =>
    ctx.cached(`chatbots:${projectName.toLowerCase()}`, async () => {
      const project = await projects.require(projectName);
      return {
        project,
        rows: (await ctx.duck.query('SELECT * FROM chatbots WHERE PROJECT_ID = ? ORDER BY ID', [
          BigInt(project.id),
        ])) as ChatbotRow[],
      };
    });

  const rich = async (row: ChatbotRow) => {
    const agent =
      row.AGENT_ID === null
        ? null
        : (await agents.list(row.PROJECT)).find((a) => a.view.id === Number(row.AGENT_ID));
    return {
      id: Number(row.ID),
      name: row.NAME,
      project: row.PROJECT,
      agent: agent?.view ?? null,
      database_id: num(row.DATABASE_ID),
      database: row.DATABASE ?? '?',
      model_name: row.MODEL_NAME,
      params: JSON.parse(row.PARAMS) as Record<string, unknown>,
      created_at: toMindsDbTimestamp(row.CREATED_AT),
      updated_at: toMindsDbTimestamp(row.UPDATED_AT),
      is_running: row.IS_RUNNING,
      last_error: row.LAST_ERROR,
      webhook_token: row.WEBHOOK_TOKEN,
    };
  };

  const flat = (row: ChatbotRow) => ({
    id: Number(row.ID),
    name: row.NAME,
    project_id: Number(row.PROJECT_ID),
    agent_id: num(row.AGENT_ID),
    model_name: row.MODEL_NAME,
    params: JSON.parse(row.PARAMS) as Record<string, unknown>,
    webhook_token: row.WEBHOOK_TOKEN,
    created_at: toMindsDbTimestamp(row.CREATED_AT),
    database_id: num(row.DATABASE_ID),
  });

  const findRow = async (projectName: string, ref: string) => {
    const { rows } = await rowsOf(projectName);
    const row = rows.find((r) => isChatbotRef(ref, r.ID, r.NAME));
    if (!row) throw notFound(`Chatbot with name ${ref} does not exist`, 'Chatbot not found');
    return row;
  };

  /** The chat database named by id or name; `db_engine`/`db_params` (make one on the fly) is not offered. */
  const resolveDatabase = async (body: {
    database_id?: number;
    database_name?: string;
    db_engine?: string;
  }): Promise<ChatDatabase | undefined> => {
    if (body.db_engine !== undefined)
      throw invalid(
        'Creating a chat database from "db_engine"/"db_params" is not supported: register it with POST /api/databases and pass "database_name"',
        'Unsupported field',
      );
    if (body.database_id === undefined && body.database_name === undefined) return undefined;
    return databases.requireIntegration({ id: body.database_id, name: body.database_name });
  };

  const run = async (projectName: string, unstamped: Unstamped<ChatbotCommand>) => {
    const command = { ...unstamped, metadata: { now: ctx.clock() } } as ChatbotCommand;
    const project = await projects.require(projectName);
    const outcome = await ctx.commands.run(projectStream(project.name), projectAggregate, (s) =>
      decideChatbot(command, s),
    );
    await settled(ctx, outcome.lastPosition);
    const first = outcome.events[0];
    if (!first || first.type === 'ChatbotDeleted') return undefined;
    const id =
      first.type === 'ChatbotCreated'
        ? first.meta.position
        : BigInt((first.data as { chatbotId: number }).chatbotId);
    return { created: first.type === 'ChatbotCreated', row: await findRow(project.name, String(id)) };
  };

  return {
    list: async (projectName: string) => Promise.all((await rowsOf(projectName)).rows.map(rich)),
    get: async (projectName: string, ref: string) => {
      const row = await findRow(projectName, ref);
      return { view: await rich(row), version: row.VERSION };
    },
    flat,
    resolveDatabase,
    run,
  };
};

export type ChatbotsService = ReturnType<typeof chatbotsService>;
