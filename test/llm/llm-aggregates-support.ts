/**
 * The stand-in's deterministic rules for the LLM functions (src/llmCalls/functionAsks.ts), so a
 * spec can work out each answer itself: LLM_FILTER keeps a row whose values (not its prompt) mention "keep";
 * LLM_REDUCE answers `reduced: <the rows' values (their first 8 characters: a summary is shorter than
 * its rows), in the order sent, joined by |>` (a second round joins the partial answers whole); LLM_RERANK ranks
 * documents by their text's length, longest first; anything else is echoed.
 */
import {
  fakeReply,
  lastUserText,
  type FakeChatBody,
  type FakeOpenAi,
  type FakeReply,
} from '../support/fakeOpenAi';

const systemText = (body: FakeChatBody) =>
  body.messages
    .filter((m) => m.role === 'system')
    .map((m) => (typeof m.content === 'string' ? m.content : ''))
    .join('\n');

/** The lines after the prompt of an LLM_REDUCE request: its rows, or the partial answers of a second round. */
const reducedLines = (user: string) => user.slice(user.indexOf(':\n') + 2).split('\n');

/** Whether an LLM_REDUCE request reduces partial answers (a group too large for one request). */
export const reducesPartials = (user: string) => /\n\nPartial answers[^\n]*:\n/.test(user);

/** The values an LLM_REDUCE request carries: its rows' (a JSON object per line), or the partial answers. */
export const reducedValues = (user: string): string[] =>
  reducesPartials(user)
    ? reducedLines(user)
    : reducedLines(user).flatMap((line) =>
        Object.values(JSON.parse(line) as Record<string, string | null>).map(String),
      );

/** A rerank request's documents, as sent. */
export const rerankDocuments = (user: string) =>
  (JSON.parse(user) as { documents: { id: number; [column: string]: unknown }[] }).documents;

/** The text a rerank document is ranked by: its values but the id, joined. */
const documentText = (d: { id: number; [column: string]: unknown }) =>
  Object.entries(d)
    .filter(([k]) => k !== 'id')
    .map(([, v]) => String(v))
    .join(' ');

export const ruledReply = (body: FakeChatBody): FakeReply => {
  const system = systemText(body);
  const user = lastUserText(body);
  if (system.includes('true or false'))
    return fakeReply.text(/keep/i.test(user.slice(user.lastIndexOf('Row: '))) ? 'true' : 'false');
  if (system.startsWith('Reduce'))
    return fakeReply.text(
      `reduced: ${reducedValues(user)
        .map((v) => (reducesPartials(user) ? v : v.slice(0, 8)))
        .join('|')}`,
    );
  if (system.startsWith('Rank')) {
    const ranking = rerankDocuments(user)
      .sort((a, b) => documentText(b).length - documentText(a).length || a.id - b.id)
      .map((d) => d.id);
    return fakeReply.text(JSON.stringify({ ranking }));
  }
  return fakeReply.text(`answer: ${user}`);
};

/** The stand-in answering by the rules above. */
export const ruled = (fake: FakeOpenAi) => fake.setFallback(ruledReply);
