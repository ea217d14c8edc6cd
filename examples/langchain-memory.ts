// Long-term memory for a LangChain.js app: a retriever over the memory bank, and a chat-message history kept in it.
//
//   npm start                                              # a Mnemos engine on http://localhost:8888
//   node --conditions=source --import tsx examples/langchain-memory.ts
//
// MNEMOS_URL names another engine. In your own project: npm install @mnemos/client @mnemos/integrations
// @langchain/core, and any chat model (`@langchain/openai`, ...) where this example uses a stand-in function
// (until a release is on npm, the @mnemos packages from tarballs made in a checkout: docs/releasing.md).
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { RunnableLambda, RunnableWithMessageHistory } from '@langchain/core/runnables';
import { Mnemos } from '@mnemos/client';
import { MnemosChatMessageHistory, MnemosRetriever } from '@mnemos/integrations/langchain';

const mnemos = new Mnemos({ baseUrl: process.env['MNEMOS_URL'] ?? 'http://localhost:8888' });
const bankId = 'bob-langchain';

await mnemos.retainBatch(bankId, [
  'Bob is training for the Berlin marathon in September.',
  { content: 'Bob switched to a vegetarian diet.', timestamp: '2024-01-10' },
]);

// 1. The retriever: recall as LangChain Documents, for any retrieval chain.
const retriever = new MnemosRetriever({ client: mnemos, bankId, recall: { max_tokens: 500 } });
for (const doc of await retriever.invoke('What is Bob preparing for?')) {
  console.log(`retrieved ${doc.metadata.score.toFixed(3)} ${doc.pageContent}`);
}

// 2. The chat history: RunnableWithMessageHistory reads it before each turn and stores both turns after it. The
// stand-in "model" answers with what it was given; put a real chat model (a prompt piped into it) in its place.
const model = RunnableLambda.from(async (input: { question: string; history?: BaseMessage[] }) => {
  const context = (await retriever.invoke(input.question)).map((doc) => doc.pageContent).join(' ');
  return new AIMessage(`(${input.history?.length ?? 0} earlier messages) From memory: ${context}`);
});
const chat = new RunnableWithMessageHistory({
  runnable: model,
  getMessageHistory: (sessionId: string) => new MnemosChatMessageHistory({ client: mnemos, bankId, sessionId }),
  inputMessagesKey: 'question',
  historyMessagesKey: 'history',
});
const config = { configurable: { sessionId: `demo-${Date.now()}` } };
console.log((await chat.invoke({ question: 'What should I cook for Bob?' }, config)).text);
console.log((await chat.invoke({ question: 'When is his race?' }, config)).text);

const history = new MnemosChatMessageHistory({ client: mnemos, bankId, sessionId: config.configurable.sessionId });
console.log(`\nthe session holds ${(await history.getMessages()).length} messages`);
