import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { httpBackend } from '../mcp/http-backend.js';
import { createMcpServer } from '../mcp/server.js';
import { stdioGuard } from '../mcp/stdio-guard.js';
import { UsageError, type CliIo } from './io.js';
import { clientFrom } from './remote.js';
import { errorMessage } from '../util/error-message.js';

/**
 * `mnemos mcp`: the MCP tools over stdio for desktop agents, forwarding to an engine or gateway (MNEMOS_URL,
 * MNEMOS_API_KEY). Standard output carries the protocol, so everything else goes to standard error.
 */
export async function mcp(args: string[], io: CliIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        url: { type: 'string' },
        'api-key': { type: 'string' },
        tenant: { type: 'string' },
        bank: { type: 'string' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
  const client = clientFrom(values, io.env);
  const bank = values.bank ?? io.env['MNEMOS_BANK'];
  const server = createMcpServer(httpBackend(client), {
    bank: bank === '' ? undefined : bank,
    onInternalError: (error) => io.stderr(`mnemos mcp: ${errorMessage(error)}\n`),
  });
  const guarded = process.stdin.pipe(stdioGuard((line) => process.stdout.write(line)));
  await server.connect(new StdioServerTransport(guarded, process.stdout));
  io.stderr(`mnemos mcp: serving over stdio, memory at ${client.baseUrl}${bank ? ` (bank ${bank})` : ''}\n`);
  return -1;
}
