import crypto from 'node:crypto';
import { allContracts, type ResourceDeclaration, type ResourceKind } from '../../events';

/**
 * Which resource an event's secrets belong to, read from its contract's declaration (`resource` in
 * events/: its kind, and the field its events carry its id in), never from the event type's name.
 */

/**
 * The word each kind's data keys are derived with (resourceKeyPrefix). Key ids are persisted (in
 * the key store, in every sealed value `enc:v1:<key id>:…`, in `DataKeysDestroyed`), so these words
 * are frozen: they are the ones key ids were derived with before kinds were declared, the first
 * word of the event type's name (`KnowledgeBaseCreated` → `Knowledge`, `MlEngineCreated` → `Ml`,
 * `AgentRunStarted` → `Agent`), so every key already written is found and destroyed by its
 * resource's forget. Never change one (test/ledger/every-secret-forgettable.spec.ts holds them
 * against the old derivation, contract by contract). A new kind may take any word: kinds sharing one
 * are told apart by their streams.
 */
export const KEY_WORDS: Readonly<Record<ResourceKind, string>> = {
  project: 'Project',
  database: 'Database',
  skill: 'Skill',
  agent: 'Agent',
  chatbot: 'Chatbot',
  file: 'File',
  fileBlob: 'File',
  model: 'Model',
  mlEngine: 'Ml',
  agentRun: 'Agent',
  agentThread: 'Agent',
  knowledgeBase: 'Knowledge',
  chatMessage: 'Chat',
  chatChannel: 'Chat',
  user: 'User',
  accessToken: 'Access',
  session: 'Session',
  ledgerCheckpoint: 'Ledger',
  dataKeys: 'Data',
  job: 'Job',
  jobRun: 'Job',
  view: 'View',
  trigger: 'Trigger',
  triggerFiring: 'Trigger',
  integrationWrite: 'Integration',
  mcpSession: 'Mcp',
  llmQuery: 'Llm',
  llmBudget: 'Llm',
};

const declarations = new Map<string, ResourceDeclaration>(allContracts.map((c) => [c.type, c.resource]));

/** The resource events of this type are about, as their contract declares it (none: not a type of the contract). */
export const declaredResource = (eventType: string): ResourceDeclaration | undefined =>
  declarations.get(eventType);

/** The resource events of this type are about, as their contract declares it. */
export const resourceOf = (eventType: string): ResourceDeclaration => {
  const declared = declaredResource(eventType);
  if (!declared)
    throw new Error(
      `Event type ${eventType} declares no resource (events/index.ts): its secrets could not be sealed under a key its resource's forget destroys`,
    );
  return declared;
};

/**
 * The prefix of the ids of a resource's data keys: the stream, its kind (as KEY_WORDS spells it) and
 * its name (case aside, as names are), hashed (key ids are file names and must not reveal names).
 * Each incarnation of the resource gets a key of its own under this prefix.
 */
export const resourceKeyPrefix = (stream: string, kind: ResourceKind, name: string): string => {
  const digest = crypto
    .createHash('sha256')
    .update(`${stream}\u0000${KEY_WORDS[kind]}\u0000${name.toLowerCase()}`)
    .digest('hex');
  return `r${digest.slice(0, 32)}-`;
};

/**
 * The name an event is about, under which its secrets are sealed: its `name`, else its `id`, else
 * none (the stream alone then tells the resource: a job's runs, an agent's run).
 */
export const resourceNameOf = (data: unknown): string => {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return '';
  const { name, id } = data as { name?: unknown; id?: unknown };
  if (typeof name === 'string') return name;
  if (typeof id === 'string' || typeof id === 'number') return String(id);
  return '';
};

/** The prefix of the keys an event's secrets are sealed with, on this stream. */
export const eventKeyPrefix = (stream: string, event: { type: string; data: unknown }): string =>
  resourceKeyPrefix(stream, resourceOf(event.type).kind, resourceNameOf(event.data));
