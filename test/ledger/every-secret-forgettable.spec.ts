/**
 * Every contract that may hold a secret declares the resource it is about (events/: its kind and the
 * field its events carry its id in), and its secrets can be forgotten: sealed on their way into a
 * real log (SQLite, files for the data keys), then shredded through the path every forget takes
 * (the secret keeper, from a deletion event as forgetDeleted does), after which none of them can be
 * read. Key ids are persisted, so the declared kinds derive exactly the key ids the type names did
 * before they were declared (a fixed table, contract by contract).
 *
 * Which contracts may hold a secret is read from their schemas by the rule the sealing follows
 * (src/shared/secretKeys.ts): a free-form object (any key, so `api_key` too), or a field whose name
 * says it holds a secret (`password`, `secretHash`), a connection string or SQL text.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import pino from 'pino';
import { allContracts, type EventContract } from '../../events';
import { commandRunner } from '../../src/eventlog/commands';
import { openSqliteLog } from '../../src/eventlog/sqlite';
import type { EventLog, NewEvent } from '../../src/eventlog/types';
import { FileDataKeyStore } from '../../src/ledger/dataKeyStore';
import { masterKeyFrom } from '../../src/ledger/envelope';
import { KEY_WORDS, resourceKeyPrefix, resourceNameOf, resourceOf } from '../../src/ledger/resources';
import { withSealedSecrets } from '../../src/ledger/sealedLog';
import { FORGOTTEN } from '../../src/ledger/sealing';
import { forgetDeleted, secretKeeper, type SecretKeeper } from '../../src/ledger/secretKeeper';
import { SecretVault } from '../../src/ledger/secretVault';
import { keyKind } from '../../src/shared/secretKeys';

/**
 * The word each contract's key ids were derived with before kinds were declared: the first word of
 * its type's name (`/^[A-Z][a-z0-9]*\/`), written out. Frozen: keys in existing logs were made so.
 */
const LEGACY_KEY_WORDS: Readonly<Record<string, string>> = {
  ProjectCreated: 'Project',
  ProjectDeleted: 'Project',
  DatabaseCreated: 'Database',
  DatabaseUpdated: 'Database',
  DatabaseDeleted: 'Database',
  SkillCreated: 'Skill',
  SkillUpdated: 'Skill',
  SkillDeleted: 'Skill',
  AgentCreated: 'Agent',
  AgentUpdated: 'Agent',
  AgentDeleted: 'Agent',
  SkillDetachedFromAgent: 'Skill',
  ChatbotCreated: 'Chatbot',
  ChatbotUpdated: 'Chatbot',
  ChatbotDeleted: 'Chatbot',
  ChatbotStoppedAgentDeleted: 'Chatbot',
  FileUploaded: 'File',
  FileDeleted: 'File',
  FileBlobClaimed: 'File',
  FileBlobUnclaimed: 'File',
  FileBlobReleased: 'File',
  ModelVersionDefined: 'Model',
  ModelTrainingStarted: 'Model',
  ModelTrainingProgressed: 'Model',
  ModelTrained: 'Model',
  ModelTrainingFailed: 'Model',
  ModelVersionActivated: 'Model',
  ModelOptionsUpdated: 'Model',
  ModelVersionDeleted: 'Model',
  ModelDeleted: 'Model',
  MlEngineCreated: 'Ml',
  MlEngineUpdated: 'Ml',
  MlEngineDeleted: 'Ml',
  AgentRunStarted: 'Agent',
  AgentRunModelCalled: 'Agent',
  AgentRunToolCalled: 'Agent',
  AgentRunAnswered: 'Agent',
  AgentRunFailed: 'Agent',
  AgentThreadTurn: 'Agent',
  KnowledgeBaseCreated: 'Knowledge',
  KnowledgeBaseDeleted: 'Knowledge',
  KnowledgeBaseDocumentsInserted: 'Knowledge',
  KnowledgeBaseDocumentsDeleted: 'Knowledge',
  ChatMessageReceived: 'Chat',
  ChatAnswerClaimed: 'Chat',
  ChatAnswered: 'Chat',
  ChatAnswerFailed: 'Chat',
  ChatAnswerDelivered: 'Chat',
  ChatDeliveryFailed: 'Chat',
  ChatChannelFailed: 'Chat',
  ChatChannelRecovered: 'Chat',
  UserCreated: 'User',
  UserPasswordChanged: 'User',
  UserRoleChanged: 'User',
  UserDeleted: 'User',
  AccessTokenCreated: 'Access',
  AccessTokenRevoked: 'Access',
  SessionStarted: 'Session',
  SessionEnded: 'Session',
  LedgerCheckpointSigned: 'Ledger',
  DataKeysDestroyed: 'Data',
  JobCreated: 'Job',
  JobDeleted: 'Job',
  JobRunStarted: 'Job',
  JobStatementRan: 'Job',
  JobRunFinished: 'Job',
  JobRunFailed: 'Job',
  JobRunSkipped: 'Job',
  JobRunAbandoned: 'Job',
  ViewCreated: 'View',
  ViewUpdated: 'View',
  ViewDeleted: 'View',
  TriggerCreated: 'Trigger',
  TriggerDeleted: 'Trigger',
  TriggerFired: 'Trigger',
  TriggerFiringFinished: 'Trigger',
  TriggerFiringFailed: 'Trigger',
  IntegrationTableWritten: 'Integration',
};

/** The key-id prefix as it was derived before kinds were declared (src/ledger/sealing.ts then). */
const legacyKeyPrefix = (stream: string, eventType: string, name: string) =>
  `r${crypto
    .createHash('sha256')
    .update(`${stream}\u0000${LEGACY_KEY_WORDS[eventType]}\u0000${name.toLowerCase()}`)
    .digest('hex')
    .slice(0, 32)}-`;

// --- Reading a contract's schema (zod 4's definitions) ---------------------------------------------

type Def = { type: string } & Record<string, unknown>;
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

type Check = { check?: string; format?: string; pattern?: RegExp; value?: unknown; inclusive?: boolean };
const checksOf = (def: Def): Check[] =>
  ((def.checks ?? []) as { _zod: { def: Check } }[]).map((c) => c._zod.def);

/** Top-level fields the sealing keeps in clear: how a resource is found (src/ledger/sealing.ts). */
const IDENTIFYING = new Set(['webhookToken', 'tokenId', 'sessionId']);

/**
 * Where a value of this schema may hold a secret, by the rule the sealing follows: each path of a
 * free-form object (any key: `api_key`) or of a field named as a secret, a connection string or SQL.
 */
const secretFieldsOf = (schema: unknown): string[] => {
  const found: string[] = [];
  const walk = (s: unknown, key: string | undefined, where: string, top: boolean) => {
    const def = defOf(s);
    switch (def.type) {
      case 'object':
        for (const [k, v] of Object.entries(def.shape as Record<string, unknown>))
          walk(v, k, where ? `${where}.${k}` : k, where === '' && top);
        return;
      case 'nullable':
      case 'optional':
        return walk(def.innerType, key, where, top);
      case 'array':
        return walk(def.element, key, `${where}[]`, false);
      case 'union':
        for (const option of def.options as unknown[]) walk(option, key, where, top);
        return;
      case 'record':
        found.push(where);
        return;
      default: {
        if (key === undefined || (top && IDENTIFYING.has(key))) return;
        // SQL and connection strings hold secrets inside text; any value under a secret's name is one.
        const kind = keyKind(key);
        if (kind === 'secret' || (kind !== 'plain' && def.type === 'string')) found.push(where);
      }
    }
  };
  walk(schema, undefined, '', true);
  return [...new Set(found)];
};

/** Every field name an object schema may carry at its top level, with its zod type. */
const topFields = (schema: unknown): Map<string, string> => {
  const def = defOf(schema);
  if (def.type !== 'object') return new Map();
  return new Map(
    Object.entries(def.shape as Record<string, unknown>).map(([k, v]) => {
      let d = defOf(v);
      while (d.type === 'nullable' || d.type === 'optional') d = defOf(d.innerType);
      return [k, d.type];
    }),
  );
};

const DATE = '2026-01-02T03:04:05.000Z';

/**
 * A valid value of the schema with a secret, made by `secret()`, wherever one may be: under a
 * free-form object's `api_key`, in a secret field whole, in a connection string or SQL text as a
 * URL's password. Other fields get plain values (`name`: `name`).
 */
const sampleOf = (schema: unknown, secret: () => string, name: string): unknown => {
  let seed = 1;
  const sample = (s: unknown, key: string | undefined, top: boolean): unknown => {
    const def = defOf(s);
    switch (def.type) {
      case 'object':
        return Object.fromEntries(
          Object.entries(def.shape as Record<string, unknown>).map(([k, v]) => [
            k,
            sample(v, k, key === undefined),
          ]),
        );
      case 'nullable':
      case 'optional':
        return sample(def.innerType, key, top);
      case 'array':
        return [sample(def.element, key, false)];
      case 'union':
        return sample((def.options as unknown[])[0], key, top);
      case 'record':
        return { api_key: secret(), region: 'eu' };
      case 'enum':
        return Object.values(def.entries as Record<string, string>)[0];
      case 'literal':
        return (def.values as unknown[])[0];
      case 'boolean':
        return false;
      case 'unknown':
        return 'plain';
      case 'number': {
        const least = checksOf(def).find((c) => c.check === 'greater_than');
        return Math.max(1, least ? Number(least.value) + (least.inclusive ? 0 : 1) : 1);
      }
      case 'string': {
        if (def.format === 'datetime') return DATE;
        const pattern = checksOf(def).find((c) => c.format === 'regex')?.pattern;
        if (pattern) return fc.sample(fc.stringMatching(pattern), { numRuns: 1, seed: seed++ })[0];
        if (key === undefined || (top && IDENTIFYING.has(key))) return 'plain';
        switch (keyKind(key)) {
          case 'secret':
            return secret();
          case 'connection':
            return `postgres://reader:${secret()}@db.example.com:5432/app`;
          case 'sql':
            return `SELECT * FROM read_csv('https://reader:${secret()}@files.example.com/t.csv')`;
          default:
            return key === 'name' ? name : 'plain';
        }
      }
      default:
        throw new Error(`The spec cannot make a ${def.type} (field ${key ?? '(root)'})`);
    }
  };
  return sample(schema, undefined, true);
};

const withSecrets = allContracts.filter((c) => secretFieldsOf(c.schema).length > 0);

// --- The declarations --------------------------------------------------------------------------------

describe('resource declarations of the event contracts', () => {
  it('given the contracts, then the schema rule finds the secrets the ledger was built for', () => {
    // A check of the check: if the rule found none of these, the specs below would prove nothing.
    const types = withSecrets.map((c) => c.type);
    for (const t of [
      'DatabaseCreated',
      'SkillCreated',
      'AgentCreated',
      'ChatbotCreated',
      'KnowledgeBaseCreated',
      'MlEngineCreated',
      'ModelVersionDefined',
      'JobCreated',
      'JobStatementRan',
      'TriggerCreated',
      'UserCreated',
    ])
      expect(types).toContain(t);
  });

  it('given every contract that may hold a secret, then it declares its resource: a kind with a key word, and an id field its kind carries', () => {
    const missing = withSecrets.filter((c) => (c as EventContract).resource === undefined).map((c) => c.type);
    expect(missing).toEqual([]);
    for (const contract of withSecrets) {
      const { kind, id } = resourceOf(contract.type);
      expect(KEY_WORDS[kind]).toEqual(expect.any(String));
      if (id === undefined) continue;
      // The declared id field is one the kind's events really carry (not a guess like `knowledgeId`).
      const carriers = allContracts.filter(
        (c) => c.resource.kind === kind && ['number', 'string'].includes(topFields(c.schema).get(id) ?? ''),
      );
      expect({ type: contract.type, id, carriers: carriers.length > 0 }).toEqual({
        type: contract.type,
        id,
        carriers: true,
      });
    }
  });

  it('given every contract of the log, then it declares its resource (a secret may reach any string: a URL password)', () => {
    expect(
      allContracts.filter((c) => (c as EventContract).resource === undefined).map((c) => c.type),
    ).toEqual([]);
  });

  it('given every contract that existed before kinds were declared, then its key ids are the ones its type name gave', () => {
    const contracts = new Map(allContracts.map((c) => [c.type as string, c]));
    for (const [type, word] of Object.entries(LEGACY_KEY_WORDS)) {
      const contract = contracts.get(type);
      expect({ type, present: contract !== undefined }).toEqual({ type, present: true });
      const { kind } = resourceOf(type);
      expect({ type, word: KEY_WORDS[kind] }).toEqual({ type, word });
      for (const [stream, name] of [
        ['project-acme', 'Notes_KB'],
        ['ml-engine-openai', 'OpenAI'],
        ['job-runs-7', ''],
      ] as const)
        expect(resourceKeyPrefix(stream, kind, name)).toBe(legacyKeyPrefix(stream, type, name));
    }
    // And the hashing itself, as the code before the declarations computed these.
    expect(resourceKeyPrefix('project-acme', resourceOf('KnowledgeBaseCreated').kind, 'Notes_KB')).toBe(
      'r18f3e0033fd471cdc96a2fc20fe06d01-',
    );
    expect(resourceKeyPrefix('ml-engine-openai', resourceOf('MlEngineCreated').kind, 'OpenAI')).toBe(
      'rc1829d86b2f63e87093e1049710aa535-',
    );
    expect(resourceKeyPrefix('job-runs-7', resourceOf('JobStatementRan').kind, '')).toBe(
      'rdad094a48877fa8abbbad9d1aef61883-',
    );
  });
});

// --- Sealed, then forgotten, on a real log -------------------------------------------------------------

describe('every secret a contract holds can be forgotten (SQLite log, file key store)', () => {
  let dir: string;
  let stored: EventLog;
  let log: EventLog;
  let vault: SecretVault;
  let keeper: SecretKeeper;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'every-secret-'));
    const clock = () => new Date();
    stored = await openSqliteLog(path.join(dir, 'events.sqlite'), clock);
    vault = new SecretVault(
      new FileDataKeyStore(path.join(dir, 'keys')),
      masterKeyFrom(crypto.randomBytes(32)),
    );
    log = withSealedSecrets(stored, vault);
    keeper = secretKeeper(
      { commands: commandRunner(log), log, clock, logger: pino({ level: 'silent' }) },
      vault,
    );
  });
  afterAll(async () => {
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const marker = () => `sec${crypto.randomBytes(8).toString('hex')}`;

  /** Appends one event of the contract holding fresh secrets; answers them and where it is. */
  const appendWithSecrets = async (
    contract: EventContract,
    stream: string,
    name: string,
    fields: Record<string, unknown> = {},
  ) => {
    const secrets: string[] = [];
    const sampled = sampleOf(
      contract.schema,
      () => {
        const s = marker();
        secrets.push(s);
        return s;
      },
      name,
    ) as Record<string, unknown>;
    const data = { ...sampled, ...fields };
    const { version } = await stored.readStream(stream, 0n);
    const { events } = await log.append(stream, [{ type: contract.type, data } as NewEvent], version);
    return { data, secrets, position: events[0]!.meta.position };
  };

  const readBack = async (stream: string) =>
    JSON.stringify((await log.readStream(stream, 0n)).events.map((e) => e.data));
  const asStored = async (stream: string) =>
    JSON.stringify((await stored.readStream(stream, 0n)).events.map((e) => e.data));

  /** A contract of the kind carrying `name` and the declared id field: how forgetDeleted is called. */
  const deletionOf = (kind: string, id: string) =>
    allContracts.find(
      (c) =>
        c.resource.kind === kind &&
        topFields(c.schema).has(id) &&
        topFields(c.schema).get('name') === 'string',
    );

  /**
   * How the resource's forget reaches it: from a deletion event of its kind (one carrying its
   * `name` and its declared id field), as forgetDeleted does for skills, agents, chatbots, jobs and
   * triggers; else as the other services do, by the resource's stream, one of its types and its name.
   */
  const forgetThroughKind = async (
    contract: EventContract,
    stream: string,
    name: string,
    position: bigint,
  ) => {
    const { kind, id } = resourceOf(contract.type);
    const deletion = id === undefined ? undefined : deletionOf(kind, id);
    if (deletion && id !== undefined) {
      await forgetDeleted(keeper, stream, { type: deletion.type, data: { name, [id]: Number(position) } });
      return;
    }
    await keeper.forget({ stream, eventType: contract.type, name }, `spec: ${contract.type}`);
  };

  it.each(withSecrets.map((c) => [c.type, c] as const))(
    'given a %s holding secrets, when its resource is forgotten, then none of them can be read any more',
    async (type, contract) => {
      const stream = `spec-${type}`;
      const { data, secrets, position } = await appendWithSecrets(contract, stream, `Res_${type}`);
      // A secret in every field that may hold one (one for each free-form object).
      expect(secrets.length).toBeGreaterThanOrEqual(secretFieldsOf(contract.schema).length);

      // Sealed: the stored event holds none of them; the log's readers get them back.
      const before = await asStored(stream);
      for (const s of secrets) expect(before).not.toContain(s);
      expect(before).toContain('enc:v1:');
      expect((await log.readStream(stream, 0n)).events[0]!.data).toEqual(data);

      await forgetThroughKind(contract, stream, resourceNameOf(data), position);

      const after = await readBack(stream);
      for (const s of secrets) expect(after).not.toContain(s);
      expect(after).toContain(FORGOTTEN);
      // The keys are gone from the store, not only from this process's memory.
      const kids = [...before.matchAll(/enc:v1:([A-Za-z0-9_.-]+):/g)].map((m) => m[1]!);
      expect((await vault.openKeys(kids)).size).toBe(0);
    },
  );

  it.each(
    withSecrets
      .filter((c) => {
        const { id } = resourceOf(c.type);
        const fields = topFields(c.schema);
        return id !== undefined && fields.get(id) === 'number' && fields.get('name') === 'string';
      })
      .map((c) => [c.type, c] as const),
  )(
    'given a %s that renamed its resource, when the resource is deleted with forget, then its secrets under both names are forgotten and another resource keeps its own',
    async (type, contract) => {
      const { kind, id } = resourceOf(type);
      const field = id!;
      const stream = `spec-renamed-${type}`;
      // The resource as first written (its id is this event's position), then under a new name.
      const first = await appendWithSecrets(contract, stream, 'Old_Name', { [field]: 999_998 });
      const renamed = await appendWithSecrets(contract, stream, 'New_Name', {
        [field]: Number(first.position),
      });
      // Another resource of the kind on the stream, with an id of its own.
      const other = await appendWithSecrets(contract, stream, 'Other', { [field]: 999_999 });

      await forgetDeleted(keeper, stream, {
        type: deletionOf(kind, field)!.type,
        data: { name: 'New_Name', [field]: Number(first.position) },
      });

      const after = await readBack(stream);
      for (const s of [...first.secrets, ...renamed.secrets]) expect(after).not.toContain(s);
      for (const s of other.secrets) expect(after).toContain(s);
    },
  );

  it('given the deletion events of a knowledge base and an ML engine, then forget reads their ids from the declared fields (the type names guessed knowledgeId and mlId)', () => {
    expect(resourceOf('KnowledgeBaseDeleted')).toEqual({ kind: 'knowledgeBase', id: 'kbId' });
    expect(resourceOf('MlEngineDeleted')).toEqual({ kind: 'mlEngine', id: 'engineId' });
    expect(resourceOf('AccessTokenRevoked')).toEqual({ kind: 'accessToken', id: 'tokenId' });
  });
});
