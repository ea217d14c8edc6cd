// Long-term memory for a Vercel AI SDK app: a middleware that recalls before each call and stores the exchange after
// it, and retain/recall/reflect tools the model can call itself.
//
//   npm start                                              # a Mnemos engine on http://localhost:8888
//   OPENAI_API_KEY=sk-... node --conditions=source --import tsx examples/ai-sdk-memory.ts
//
// Any OpenAI-compatible server works as the model: OPENAI_BASE_URL (default https://api.openai.com/v1), MODEL
// (default gpt-4o-mini). MNEMOS_URL names another engine. In your own project: npm install @mnemos/client
// @mnemos/integrations ai @ai-sdk/openai-compatible (or any AI SDK provider; ai 6 or 7); until a release is on npm,
// the @mnemos packages from tarballs made in a checkout (docs/releasing.md).
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { Mnemos } from '@mnemos/client';
import { mnemosMemory, mnemosTools } from '@mnemos/integrations/ai-sdk';

const provider = createOpenAICompatible({
  name: 'openai',
  baseURL: process.env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1',
  apiKey: process.env['OPENAI_API_KEY'],
});
const baseModel = provider(process.env['MODEL'] ?? 'gpt-4o-mini');
const mnemos = new Mnemos({ baseUrl: process.env['MNEMOS_URL'] ?? 'http://localhost:8888' });
const bankId = 'alice-ai-sdk';

// 1. The middleware: every call sees what memory holds about the question, and is remembered afterwards.
const model = wrapLanguageModel({ model: baseModel, middleware: mnemosMemory({ client: mnemos, bankId }) });
const first = await generateText({ model, prompt: 'Hi! I am Alice, and I prefer green tea over coffee.' });
console.log(`first conversation: ${first.text}`);
// A new conversation, no history passed: the preference comes back from memory.
const second = await generateText({ model, prompt: 'What should you offer me to drink?' });
console.log(`second conversation: ${second.text}`);

// 2. The tools: the model decides when to store, search or ask its memory.
const withTools = await generateText({
  model: baseModel,
  tools: mnemosTools({ client: mnemos, bankId }),
  stopWhen: stepCountIs(4),
  prompt: 'Remember that my birthday is on the 4th of March, then tell me what you know about me.',
});
console.log(`with tools (${withTools.steps.length} steps): ${withTools.text}`);

const stored = await mnemos.listMemories(bankId);
console.log(`\nthe bank "${bankId}" holds ${stored.total} memories:`);
for (const memory of stored.items) console.log(`  ${memory.text}`);
