// Copy-paste snippets for the Connect page, filled with the gateway's address. The key stays in an environment
// variable so a pasted snippet never holds a secret.
export const EXAMPLE_BANK = 'my-agent';
const FACT = 'Alice prefers green tea over coffee.';
const QUESTION = 'What does Alice drink?';

export interface Snippet {
  id: string;
  label: string;
  text: string;
}

export function snippets(baseUrl: string): Snippet[] {
  const bankUrl = `${baseUrl}/v1/me/banks/${EXAMPLE_BANK}/memories`;
  return [
    {
      id: 'curl',
      label: 'curl',
      text: [
        `export MNEMOS_API_KEY=mnm_live_...   # a key from Connect > API keys`,
        `curl -s ${bankUrl} \\`,
        `  -H "Authorization: Bearer $MNEMOS_API_KEY" -H "Content-Type: application/json" \\`,
        `  -d '{"content": "${FACT}"}'`,
        `curl -s ${bankUrl}/recall \\`,
        `  -H "Authorization: Bearer $MNEMOS_API_KEY" -H "Content-Type: application/json" \\`,
        `  -d '{"query": "${QUESTION}"}'`,
      ].join('\n'),
    },
    {
      id: 'typescript',
      label: 'TypeScript',
      text: [
        `// npm install @mnemos/client, then run with MNEMOS_API_KEY set (until a release is on npm, install the`,
        `// tarball that npm pack -w packages/client makes in a checkout of Mnemos; see its docs/releasing.md)`,
        `import { Mnemos } from '@mnemos/client';`,
        ``,
        `const mnemos = new Mnemos({ baseUrl: '${baseUrl}', apiKey: process.env.MNEMOS_API_KEY });`,
        `await mnemos.retain('${EXAMPLE_BANK}', '${FACT}');`,
        `const { results } = await mnemos.recall('${EXAMPLE_BANK}', '${QUESTION}');`,
        `console.log(results.map((memory) => memory.text));`,
      ].join('\n'),
    },
    {
      id: 'python',
      label: 'Python',
      text: [
        `# pip install mnemos-client, then run with MNEMOS_API_KEY set (until a release is on PyPI,`,
        `# pip install ./clients/python in a checkout of Mnemos; see its docs/releasing.md)`,
        `import os`,
        `from mnemos_client import Mnemos`,
        ``,
        `m = Mnemos(base_url="${baseUrl}", api_key=os.environ["MNEMOS_API_KEY"])`,
        `m.retain("${EXAMPLE_BANK}", "${FACT}")`,
        `print([memory.text for memory in m.recall("${EXAMPLE_BANK}", "${QUESTION}").results])`,
      ].join('\n'),
    },
    {
      id: 'mcp',
      label: 'MCP client',
      text: JSON.stringify(
        {
          mcpServers: {
            mnemos: { type: 'http', url: `${baseUrl}/mcp`, headers: { Authorization: 'Bearer mnm_live_...' } },
          },
        },
        null,
        2,
      ),
    },
  ];
}
