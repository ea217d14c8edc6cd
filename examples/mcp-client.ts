// Talk to the Mnemos MCP server the way an agent framework does, with the official MCP SDK client.
//
//   npm start                                                     # an engine on http://localhost:8888
//   node --conditions=source --import tsx examples/mcp-client.ts [base_url]
//
// The engine serves MCP at POST /mcp (any bank: tools take bank_id) and /mcp/{bank} (one bank).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const baseUrl = process.argv[2] ?? process.env['MNEMOS_URL'] ?? 'http://localhost:8888';
const client = new Client({ name: 'mnemos-example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/bob', baseUrl)));

const { tools } = await client.listTools();
console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);

await client.callTool({ name: 'retain', arguments: { content: 'Bob is allergic to peanuts.' } });
const recalled = await client.callTool({ name: 'recall', arguments: { query: 'Can Bob eat satay sauce?' } });
const [first] = recalled.content as Array<{ type: string; text?: string }>;
console.log(`recall answered:\n${first?.text ?? ''}`);
await client.close();
