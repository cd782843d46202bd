import { agentFace } from './agent/face';
import type { TableFace } from './face';
import { fileFace } from './file/face';
import { integrationFace, nativeQueryFace } from './integration/face';
import { knowledgeBaseFace } from './knowledgeBase/face';
import { modelFace } from './model/face';
import { historyFace, systemFace } from './system/face';

/**
 * Every kind of name a query reads from, asked in this order; the first to recognise a name has
 * it. The order is MindsDB's precedence: an agent's name wins over a knowledge base's and a
 * model's, a project's objects over a database of the same name, and the system face, last, answers
 * (or refuses) whatever is left. A new kind of table is one folder and one line here.
 */
export const TABLE_FACES: readonly TableFace[] = [
  nativeQueryFace,
  historyFace,
  agentFace,
  knowledgeBaseFace,
  modelFace,
  integrationFace,
  fileFace,
  systemFace,
];
