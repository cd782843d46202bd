import { A2A_PROTOCOL_VERSION, type AgentCard } from './sdk';
import type { A2aAgent } from './ports';

/** The v0.3 protocol the SDK's compatibility layer speaks (MindsDB's A2A clients). */
const LEGACY_PROTOCOL_VERSION = '0.3';
/** The name of the bearer scheme in cards (and of the requirement naming it). */
const BEARER_SCHEME = 'bearer';

/**
 * An agent's card: its name, a description, its skills (by name, type and the skill's own
 * description; never its parameters), JSON-RPC at `url` in the protocol version the SDK speaks and
 * in v0.3, streaming on, push notifications off, and with sign-in on the bearer scheme it requires.
 */
export const agentCard = (
  agent: A2aAgent,
  url: string,
  options: { readonly authEnabled: boolean; readonly serverVersion: string; readonly origin: string },
): AgentCard => ({
  name: agent.name,
  description:
    agent.description ??
    `Agent ${agent.name} of project ${agent.project}: answers questions in plain language with its skills; each answer is a run recorded in mindledger's event log.`,
  supportedInterfaces: [
    { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
    { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: LEGACY_PROTOCOL_VERSION },
  ],
  provider: { organization: `mindledger ${options.serverVersion}`, url: options.origin },
  version: agent.version,
  documentationUrl: `${options.origin}/doc`,
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: options.authEnabled
    ? {
        [BEARER_SCHEME]: {
          scheme: {
            $case: 'httpAuthSecurityScheme',
            value: {
              description: 'A personal access token of this server (POST /api/tokens), as for its REST API',
              scheme: 'Bearer',
              bearerFormat: '',
            },
          },
        },
      }
    : {},
  securityRequirements: options.authEnabled ? [{ schemes: { [BEARER_SCHEME]: { list: [] } } }] : [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain', 'application/json'],
  skills:
    agent.skills.length > 0
      ? agent.skills.map((s) => ({
          id: s.name,
          name: s.name,
          description: s.description ?? `A ${s.type} skill of agent ${agent.name}`,
          tags: [s.type],
          examples: [],
          inputModes: [],
          outputModes: [],
          securityRequirements: [],
        }))
      : [
          {
            id: 'answer',
            name: 'answer',
            description: `Answers questions with the model of agent ${agent.name} (it has no skills)`,
            tags: ['answer'],
            examples: [],
            inputModes: [],
            outputModes: [],
            securityRequirements: [],
          },
        ],
  signatures: [],
});
