// Mnemos quickstart in TypeScript: retain a few memories, recall them, and reflect if the engine has an LLM.
//
//   npm start                                                     # an engine on http://localhost:8888
//   node --conditions=source --import tsx examples/typescript-quickstart.ts [base_url]
//
// In your own project: npm install @mnemos/client, then `import { Mnemos } from '@mnemos/client'` (until a release is
// on npm, install the tarball made in a checkout: docs/releasing.md).
// Through a gateway: MNEMOS_API_KEY=mnm_live_... node ... examples/typescript-quickstart.ts https://your-gateway
import { Mnemos, MnemosError } from '@mnemos/client';

const baseUrl = process.argv[2] ?? process.env['MNEMOS_URL'] ?? 'http://localhost:8888';
const mnemos = new Mnemos({ baseUrl, apiKey: process.env['MNEMOS_API_KEY'] });
const bank = 'alice@example.com';

const stored = await mnemos.retain(bank, 'Alice prefers green tea over coffee, especially in the morning.', { tags: ['drinks'] });
console.log(`retained ${stored.items_count} memory: ${stored.memory_ids.join(', ')}`);
await mnemos.retainBatch(bank, [
  "Alice's birthday is on the 4th of March.",
  { content: 'Alice moved from Paris to Lyon for a new job.', timestamp: '2024-10-15' },
]);

console.log('\nrecall: what does Alice drink?');
const { results } = await mnemos.recall(bank, 'What does Alice drink?', { max_tokens: 512 });
for (const memory of results) console.log(`  ${memory.score.toFixed(3)} [${memory.type}] ${memory.text}`);

// Spaces partition a bank: this memory is recalled only by calls that name the space "acme".
await mnemos.retain(bank, 'Alice is the tech lead of the acme billing project.', 'acme');
const inAcme = await mnemos.recall(bank, 'What is Alice working on?', { space: 'acme' });
console.log(`\nin space acme: ${inAcme.results.map((r) => r.text).join(' | ')}`);

try {
  const answer = await mnemos.reflect(bank, 'What should I offer Alice when she visits in the morning?');
  console.log(`\nreflect: ${answer.text}\n  citations: ${answer.citations.join(', ')}`);
} catch (error) {
  if (error instanceof MnemosError && error.code === 'llm_not_configured') {
    console.log('\nreflect: this engine has no LLM (set MNEMOS_API_LLM_PROVIDER and MNEMOS_API_LLM_MODEL to enable it)');
  } else {
    throw error;
  }
}

const listed = await mnemos.listMemories(bank, { limit: 10 });
console.log(`\n${listed.total} memories in ${bank} (all spaces)`);
