// Long-term memory for an OpenAI Agents SDK agent: retain, recall and reflect as function tools.
//
//   npm start                                              # a Mnemos engine on http://localhost:8888
//   OPENAI_API_KEY=sk-... node --conditions=source --import tsx examples/openai-agents-memory.ts
//
// Any Chat Completions server works as the model: OPENAI_BASE_URL (default https://api.openai.com/v1), MODEL
// (default gpt-4o-mini). MNEMOS_URL names another engine. In your own project: npm install @mnemos/client
// @mnemos/integrations @openai/agents, and import Agent, Runner and OpenAIProvider from '@openai/agents'
// (until a release is on npm, the @mnemos packages from tarballs made in a checkout: docs/releasing.md).
import { Agent, Runner } from '@openai/agents-core';
import { OpenAIProvider } from '@openai/agents-openai';
import { Mnemos } from '@mnemos/client';
import { mnemosAgentTools } from '@mnemos/integrations/openai-agents';

const mnemos = new Mnemos({ baseUrl: process.env['MNEMOS_URL'] ?? 'http://localhost:8888' });
const agent = new Agent({
  name: 'Assistant',
  instructions: 'You are a helpful assistant with long-term memory. Recall before answering; retain what lasts.',
  model: process.env['MODEL'] ?? 'gpt-4o-mini',
  tools: mnemosAgentTools({ client: mnemos, bankId: 'carol-agents' }),
});
const modelProvider = new OpenAIProvider({
  baseURL: process.env['OPENAI_BASE_URL'], apiKey: process.env['OPENAI_API_KEY'], useResponses: false,
});
// Tracing is off so the example sends nothing but the model calls.
const runner = new Runner({ modelProvider, tracingDisabled: true });

const first = await runner.run(agent, 'Please remember that I am allergic to peanuts.');
console.log(`first run: ${String(first.finalOutput)}`);
const second = await runner.run(agent, 'Suggest a snack for me.');
console.log(`second run: ${String(second.finalOutput)}`);
const calls = second.newItems.filter((item) => item.type === 'tool_call_item').length;
console.log(`(the second run made ${calls} memory tool calls)`);
