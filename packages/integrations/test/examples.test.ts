// The framework examples under examples/ run to the end against a real engine, with the stand-in LLM as their model.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { REPO_ROOT } from '../../engine/test/helpers/engine.js';
import { agentRequests, startMemoryEngine, type MemoryEngine } from './helpers/memory-engine.js';

const run = promisify(execFile);
let mem: MemoryEngine;

before(async () => {
  mem = await startMemoryEngine();
});
after(async () => {
  await mem?.stop();
});
beforeEach(() => {
  mem.llm.calls.length = 0;
});

/** Runs an example from source (tsx) with the engine and the stand-in model, and answers what it printed. */
async function runExample(file: string): Promise<string> {
  const script = path.join(REPO_ROOT, 'examples', file);
  const { stdout } = await run(process.execPath, ['--conditions=source', '--import', 'tsx', script], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      MNEMOS_URL: mem.engine.url,
      OPENAI_BASE_URL: mem.llm.openaiBaseUrl,
      OPENAI_API_KEY: 'x',
      MODEL: 'fake',
    },
  });
  return stdout;
}

test('examples/ai-sdk-memory.ts: the second conversation is given the first one from memory', async () => {
  mem.say('Nice to meet you, Alice.');
  mem.say('Green tea, of course.');
  mem.callTool('retain', { content: "Alice's birthday is on the 4th of March." });
  mem.say('Your birthday is on the 4th of March and you prefer green tea.');
  const output = await runExample('ai-sdk-memory.ts');
  assert.match(output, /second conversation: Green tea, of course\./);
  assert.match(output, /with tools \(2 steps\): Your birthday is on the 4th of March/);
  const memoryPrompt = agentRequests(mem.llm)[1]!.find((m) => m.role === 'system');
  const firstTurn = /- \[[\d-]{10}\] User: Hi! I am Alice, and I prefer green tea over coffee\./;
  assert.match(String(memoryPrompt?.content), firstTurn);
  const texts = (await mem.client.listMemories('alice-ai-sdk')).items.map((m) => m.text);
  assert.ok(texts.includes("Alice's birthday is on the 4th of March."), texts.join(' | '));
  assert.ok(texts.includes('Assistant: Green tea, of course.'), texts.join(' | '));
});

test('examples/langchain-memory.ts: the retriever and the chat history work against the engine', async () => {
  const output = await runExample('langchain-memory.ts');
  assert.match(output, /retrieved \d\.\d{3} Bob is training for the Berlin marathon in September\./);
  assert.match(output, /\(2 earlier messages\) From memory: .*marathon/);
  assert.match(output, /the session holds 4 messages/);
});

test('examples/openai-agents-memory.ts: the agent stores in one run what it recalls in the next', async () => {
  mem.callTool('retain', { content: 'Carol is allergic to peanuts.' });
  mem.say('Noted: no peanuts.');
  mem.callTool('recall', { query: 'allergies' });
  mem.say('Try apple slices with sunflower butter.');
  const output = await runExample('openai-agents-memory.ts');
  assert.match(output, /second run: Try apple slices/);
  assert.match(output, /made 1 memory tool calls/);
  const recallAnswer = agentRequests(mem.llm)[3]!.find((m) => m.role === 'tool');
  assert.match(String(recallAnswer?.content), /Carol is allergic to peanuts\./);
});
