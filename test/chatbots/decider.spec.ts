import { decideChatbot, type ChatbotCommand } from '../../src/chatbots/decider';
import {
  agentCreated,
  at,
  chatbotCreated,
  now,
  projectCreated,
  projectSpec,
  TOKEN,
} from '../support/project';

const spec = projectSpec<ChatbotCommand>(decideChatbot);
const metadata = { now };
const database = { id: 99n, name: 'chat' };

describe('chatbot decider', () => {
  it('creates a chatbot on an agent, taking the agent model name', () =>
    spec
      .given([projectCreated, agentCreated('a1')])
      .when({
        type: 'CreateChatbot',
        data: {
          name: 'bot',
          agentRef: 'a1',
          modelName: null,
          database,
          isRunning: true,
          params: {},
          webhookToken: TOKEN,
        },
        metadata,
      })
      .then([chatbotCreated('bot', 2)]));

  it('needs an agent or a model, and the agent must exist', () => {
    spec
      .given([projectCreated])
      .when({
        type: 'CreateChatbot',
        data: {
          name: 'b',
          agentRef: null,
          modelName: null,
          database,
          isRunning: false,
          params: {},
          webhookToken: TOKEN,
        },
        metadata,
      })
      .thenThrows('Invalid', /either "model_name" or "agent_name"/);
    spec
      .given([projectCreated])
      .when({
        type: 'CreateChatbot',
        data: {
          name: 'b',
          agentRef: 'ghost',
          modelName: null,
          database,
          isRunning: false,
          params: {},
          webhookToken: TOKEN,
        },
        metadata,
      })
      .thenThrows('NotFound', /Agent with name ghost/);
    spec
      .given([projectCreated])
      .when({
        type: 'CreateChatbot',
        data: {
          name: 'b',
          agentRef: null,
          modelName: 'm',
          database,
          isRunning: false,
          params: {},
          webhookToken: TOKEN,
        },
        metadata,
      })
      .thenThrows('NotFound', /Model with name m/);
  });

  it('PUT merges params with the new values winning (MindsDB keeps the old ones)', () =>
    spec
      .given([
        projectCreated,
        agentCreated('a1'),
        chatbotCreated('bot', 2, { a: 'old', b: 'keep', c: 'drop' }),
      ])
      .when({
        type: 'PutChatbot',
        data: {
          ref: 'bot',
          params: { a: 'new', c: null, d: 'add' },
          isRunning: false,
          webhookToken: 'unused',
        },
        metadata,
      })
      .then([
        {
          type: 'ChatbotUpdated',
          data: expect.objectContaining({
            chatbotId: 3,
            params: { a: 'new', b: 'keep', d: 'add' },
            isRunning: false,
            updatedAt: at,
          }),
        },
      ]));

  it('PUT creates a missing chatbot, under the URL name when the body has none', () =>
    spec
      .given([projectCreated, agentCreated('a1')])
      .when({
        type: 'PutChatbot',
        data: { ref: 'bot', agentRef: 'a1', database, isRunning: true, webhookToken: TOKEN },
        metadata,
      })
      .then([chatbotCreated('bot', 2)]));

  it('refuses duplicate names and stale versions', () => {
    const given = spec.given([
      projectCreated,
      agentCreated('a1'),
      chatbotCreated('bot', 2),
      chatbotCreated('bot2', 2),
    ]);
    given
      .when({
        type: 'CreateChatbot',
        data: {
          name: 'bot',
          agentRef: 'a1',
          modelName: null,
          database,
          isRunning: true,
          params: {},
          webhookToken: TOKEN,
        },
        metadata,
      })
      .thenThrows('Conflict');
    given
      .when({ type: 'PutChatbot', data: { ref: 'bot', name: 'bot2', webhookToken: TOKEN }, metadata })
      .thenThrows('Conflict');
    given
      .when({ type: 'DeleteChatbot', data: { ref: 'bot', expectedVersion: 9n }, metadata })
      .thenThrows('PreconditionFailed');
  });
});
