// The LangChain.js adapter driven by @langchain/core itself (retriever invoke and pipe, RunnableWithMessageHistory)
// against a real engine.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { RunnableLambda, RunnableWithMessageHistory } from '@langchain/core/runnables';
import { MnemosChatMessageHistory, MnemosRetriever } from '@mnemos/integrations/langchain';
import { startMemoryEngine, type MemoryEngine } from './helpers/memory-engine.js';

let mem: MemoryEngine;

before(async () => {
  mem = await startMemoryEngine();
  await mem.client.retainBatch('lc-retriever', [
    { content: 'Gina prefers oolong tea in the afternoon.', timestamp: '2024-03-02' },
    { content: 'Gina leads the payments team at work.', tags: ['work'] },
    { content: 'Gina has a cat called Miso.' },
  ]);
});
after(async () => {
  await mem?.stop();
});

test('the retriever answers the recalled memories as Documents, best first, with their ids, scores and relevance', async () => {
  const retriever = new MnemosRetriever({ client: mem.client, bankId: 'lc-retriever' });
  const docs = await retriever.invoke('What tea does Gina drink?');
  assert.ok(docs.length >= 1);
  assert.equal(docs[0]!.pageContent, 'Gina prefers oolong tea in the afternoon.');
  assert.equal(docs[0]!.id, docs[0]!.metadata.id);
  assert.equal(docs[0]!.metadata.occurred_at?.slice(0, 10), '2024-03-02');
  assert.equal(typeof docs[0]!.metadata.score, 'number');
  const relevance = docs[0]!.metadata.relevance;
  assert.ok(relevance !== undefined && relevance > 0 && relevance <= 1, String(relevance));
  assert.equal(docs[0]!.metadata.bank_id, 'lc-retriever');
});

test('the retriever passes its recall settings on, and works inside a LangChain pipeline', async () => {
  const retriever = new MnemosRetriever({
    client: mem.client,
    bankId: 'lc-retriever',
    recall: { tags: ['work'], tags_match: 'any_strict' },
  });
  const texts = RunnableLambda.from((docs: Array<{ pageContent: string }>) => docs.map((d) => d.pageContent));
  const chain = retriever.pipe(texts);
  const [work, pets] = await chain.batch(['What does Gina do at work?', 'Does Gina have pets?']);
  assert.deepEqual(work, ['Gina leads the payments team at work.']);
  assert.deepEqual(pets, ['Gina leads the payments team at work.'], 'only memories tagged "work" are searched');
});

test('the chat history stores messages in order, per session, and reads them back as LangChain messages', async () => {
  const bank = 'lc-history';
  const first = new MnemosChatMessageHistory({ client: mem.client, bankId: bank, sessionId: 'chat-1' });
  const second = new MnemosChatMessageHistory({ client: mem.client, bankId: bank, sessionId: 'chat-2' });
  await first.addMessages([new HumanMessage('Hi, I am Hana.'), new AIMessage('Hello Hana!')]);
  await second.addUserMessage('A different conversation.');
  await first.addMessage(new HumanMessage('I live in Osaka.'));
  await first.addAIMessage('Osaka is lovely.');

  const messages = await first.getMessages();
  assert.deepEqual(
    messages.map((m) => [m.type, m.text]),
    [
      ['human', 'Hi, I am Hana.'],
      ['ai', 'Hello Hana!'],
      ['human', 'I live in Osaka.'],
      ['ai', 'Osaka is lovely.'],
    ],
  );
  assert.deepEqual(
    (await second.getMessages()).map((m) => m.text),
    ['A different conversation.'],
  );

  // The conversation is memory too: recall finds it, labelled with the speaker.
  const recalled = await mem.client.recall(bank, 'Where does Hana live?');
  assert.equal(recalled.results[0]!.text, 'User: I live in Osaka.');

  await first.clear();
  assert.deepEqual(await first.getMessages(), []);
  assert.equal((await second.getMessages()).length, 1, 'clearing one session leaves the others');
});

test('RunnableWithMessageHistory reads the history before each run and stores both turns after it', async () => {
  const seen: number[] = [];
  // RunnableWithMessageHistory adds `history` to the input before the inner runnable sees it.
  const chat = RunnableLambda.from((input: { history?: BaseMessage[]; question: string }) => {
    const turns = input.history?.length ?? -1;
    seen.push(turns);
    return new AIMessage(`Answer ${turns / 2 + 1} to: ${input.question}`);
  });
  // Deprecated in favour of LangGraph, yet what LangChain.js chains without LangGraph use: the adapter must serve it.
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  const withHistory = new RunnableWithMessageHistory({
    runnable: chat,
    getMessageHistory: (sessionId: string) =>
      new MnemosChatMessageHistory({ client: mem.client, bankId: 'lc-runnable', sessionId }),
    inputMessagesKey: 'question',
    historyMessagesKey: 'history',
  });
  const config = { configurable: { sessionId: 'ivy' } };
  await withHistory.invoke({ question: 'What is Mnemos?' }, config);
  const second = await withHistory.invoke({ question: 'And how do I use it?' }, config);
  assert.equal(second.text, 'Answer 2 to: And how do I use it?');
  assert.deepEqual(seen, [0, 2]);
  const stored = new MnemosChatMessageHistory({ client: mem.client, bankId: 'lc-runnable', sessionId: 'ivy' });
  assert.deepEqual(
    (await stored.getMessages()).map((m) => m.text),
    ['What is Mnemos?', 'Answer 1 to: What is Mnemos?', 'And how do I use it?', 'Answer 2 to: And how do I use it?'],
  );
});

test('the chat history refuses what it cannot store, with a message that says why', async () => {
  const history = new MnemosChatMessageHistory({ client: mem.client, bankId: 'lc-refuse', sessionId: 's' });
  await assert.rejects(
    history.addMessage(new ToolMessage({ content: '42', tool_call_id: 'c1' })),
    /stores human and AI messages; a "tool" message cannot be stored/,
  );
  assert.deepEqual(await history.getMessages(), [], 'nothing was stored');
  assert.throws(() => new MnemosChatMessageHistory({ client: mem.client, bankId: 'b', sessionId: '' }), /"sessionId"/);
});
