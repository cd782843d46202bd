import { InvalidMessagesError, mindsDbErrorType, normalizeMessages } from '../../src/engines/agentLoop';

const invalid = (input: unknown, options?: { userColumn?: string; assistantColumn?: string }) => {
  try {
    normalizeMessages(input, options);
  } catch (error) {
    if (error instanceof InvalidMessagesError) return error.message;
    throw error;
  }
  throw new Error('expected the messages to be refused');
};

describe('completion messages, in both MindsDB shapes', () => {
  it('reads question/answer rows: earlier rows are history, the last row is the question', () => {
    expect(
      normalizeMessages([
        { question: 'q1', answer: 'a1' },
        { question: 'q2', answer: '' },
        { question: 'q3', answer: null },
      ]),
    ).toEqual({
      question: 'q3',
      history: [
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1' },
        { role: 'user', content: 'q2' },
      ],
      lastRow: { question: 'q3', answer: null },
    });
  });

  it('reads role/content messages, including text parts', () => {
    expect(
      normalizeMessages([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'q2 ' },
            { type: 'text', text: 'continued' },
          ],
        },
      ]),
    ).toEqual({
      question: 'q2 continued',
      history: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1' },
      ],
      lastRow: { question: 'q2 continued' },
    });
  });

  it("uses the agent's user_column / assistant_column names", () => {
    expect(
      normalizeMessages(
        [
          { text: 'hello', reply: 'hi' },
          { text: 'how are you', city: 'Oslo' },
        ],
        { userColumn: 'text', assistantColumn: 'reply' },
      ),
    ).toEqual({
      question: 'how are you',
      history: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi' },
      ],
      lastRow: { text: 'how are you', city: 'Oslo' },
    });
  });

  it('refuses empty, malformed, or answer-last input with a message that says what is wrong', () => {
    expect(invalid([])).toBe('messages is empty: send at least the question');
    expect(invalid('hello')).toBe('messages must be a list');
    expect(invalid([42])).toBe('messages[0] must be an object');
    expect(invalid([{ role: 'robot', content: 'x' }])).toBe(
      'messages[0]: role must be user, assistant or system, and content a string',
    );
    expect(invalid([{ foo: 'bar' }])).toBe(
      'messages[0] has neither "role"/"content" nor "question"/"answer"',
    );
    expect(
      invalid([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ]),
    ).toBe("the last message must be the user's question");
    expect(invalid([{ question: '   ', answer: null }])).toBe('the question is empty');
  });
});

describe("MindsDB's stream error types", () => {
  it('maps run failure kinds to the error_type of a stream error chunk', () => {
    expect(
      (['timeout', 'unreachable', 'authentication', 'not_found', 'rate_limit', 'tool_errors'] as const).map(
        mindsDbErrorType,
      ),
    ).toEqual(['timeout', 'connection', 'authentication', 'not_found', 'rate_limit', 'general']);
  });
});
