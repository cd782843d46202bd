import { agentCreated, at, chatbotCreated, projectCreated } from '../support/project';
import { projected } from '../support/projection';

describe('chatbots table', () => {
  it('shows the agent by name, follows its renames, and stops the bot when its agent is deleted', async () => {
    const table = await projected([
      projectCreated,
      agentCreated('a1'),
      chatbotCreated('bot', 2, { token: 'xoxb-secret' }),
      { type: 'AgentUpdated', data: { ...agentCreated('a2').data, agentId: 2, updatedAt: at } },
    ]);
    expect(table('chatbots')).toEqual([
      expect.objectContaining({
        NAME: 'bot',
        AGENT: 'a2',
        AGENT_ID: 2n,
        DATABASE: 'chat',
        PARAMS: { token: '******' },
        IS_RUNNING: true,
        LAST_ERROR: null,
      }),
    ]);
    const stopped = await projected([
      projectCreated,
      agentCreated('a1'),
      chatbotCreated('bot', 2),
      {
        type: 'ChatbotStoppedAgentDeleted',
        data: {
          projectId: 1,
          chatbotId: 3,
          agentId: 2,
          agentName: 'a1',
          lastError: "agent 'a1' was deleted",
          stoppedAt: at,
        },
      },
    ]);
    expect(stopped('chatbots')).toEqual([
      expect.objectContaining({
        AGENT: null,
        AGENT_ID: null,
        IS_RUNNING: false,
        LAST_ERROR: "agent 'a1' was deleted",
      }),
    ]);
  });

  it('clears the error when the bot is started again, and forgets a deleted chat database', async () => {
    const table = await projected([
      projectCreated,
      agentCreated('a1'),
      chatbotCreated('bot', 2),
      {
        type: 'ChatbotStoppedAgentDeleted',
        data: {
          projectId: 1,
          chatbotId: 3,
          agentId: 2,
          agentName: 'a1',
          lastError: 'stopped',
          stoppedAt: at,
        },
      },
      {
        type: 'ChatbotUpdated',
        data: { ...chatbotCreated('bot', null).data, chatbotId: 3, isRunning: true, updatedAt: at },
      },
      { type: 'DatabaseDeleted', data: { databaseId: 99, name: 'chat', deletedAt: at } },
    ]);
    expect(table('chatbots')).toEqual([
      expect.objectContaining({ IS_RUNNING: true, LAST_ERROR: null, DATABASE: null, DATABASE_ID: null }),
    ]);
  });
});
