import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Engine } from '../../engine.js';
import type { ImportRecord } from '../../memory/import.js';
import { exportLine } from '../../wire/answers.js';
import { BankParams, ExportQuery, ImportAnswer, ImportQuery } from '../../wire/schemas.js';
import { importRecord, mem0Memories, TransferProblem } from '../../wire/transfer.js';
import { answers } from '../responses.js';
import { typed, type TypedApp } from '../typed-app.js';

const tags = ['memories'];

/** Records stored per transaction (and per embedding batch) during an import. */
const IMPORT_BATCH = 200;

interface ImportResult {
  imported: number;
  skipped: number;
  failed: Array<{ line: number; problem: string }>;
}

/** The lines of a body (numbered from 1), read as it arrives; past `limit` bytes the rest is not read. */
async function* bodyLines(
  body: AsyncIterable<Buffer>,
  limit: number,
): AsyncGenerator<{ line: number; text: string } | { line: number; over: true }> {
  const decoder = new StringDecoder('utf8');
  let bytes = 0;
  let line = 0;
  let rest = '';
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > limit) {
      yield { line: line + 1, over: true };
      return;
    }
    const parts = (rest + decoder.write(chunk)).split('\n');
    rest = parts.pop() ?? '';
    for (const text of parts) yield { line: ++line, text };
  }
  const last = rest + decoder.end();
  if (last !== '') yield { line: ++line, text: last };
}

async function wholeBody(body: AsyncIterable<Buffer>, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function registerTransferRoutes(app: TypedApp, engine: Engine): void {
  const service = engine.service;
  app.get(
    '/v1/:tenant/banks/:bank/export',
    {
      schema: {
        tags,
        operationId: 'exportMemories',
        summary: "Stream a bank's memories as NDJSON, one memory a line (retained memories first, then facts)",
        description:
          'Each line has the fields of a memory (id, text, type, space, metadata, tags, dates, state, validity, ' +
          'source_id for a fact); POST .../import reads the same lines back. Read from the database a page at a time.',
        params: BankParams,
        querystring: ExportQuery,
        ...answers({
          200: {
            description: 'One memory a line',
            content: { 'application/x-ndjson': { schema: { type: 'string' } as never } },
          },
        }),
      },
    },
    async (req, reply) => {
      const selection = { tenant: req.params.tenant, bankId: req.params.bank, space: req.query.space };
      const memories = service.exportMemories(selection);
      async function* lines() {
        for await (const memory of memories) yield exportLine(memory);
      }
      return reply.type('application/x-ndjson').send(Readable.from(lines()));
    },
  );

  const limit = engine.config.maxImportBytes;
  void app.register(async (scope) => {
    // The body is read by the handler as it arrives (never whole, never as JSON): any media type is taken as it is.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => {
      done(null, undefined);
    });
    typed(scope).post(
      '/v1/:tenant/banks/:bank/import',
      {
        bodyLimit: limit,
        config: { streamedBody: true },
        schema: {
          tags,
          operationId: 'importMemories',
          summary: 'Import memories: the lines of an export (NDJSON), or a mem0 get_all document (format=mem0)',
          description:
            'Keeps ids, skips memories already in the bank (the same id, or the same content in the same space), ' +
            "embeds with this engine's model and seals under the bank's key. A bad line is reported and the rest go " +
            `on. The body may be up to MNEMOS_API_MAX_IMPORT_BYTES (${limit} here); send larger exports in parts.`,
          params: BankParams,
          querystring: ImportQuery,
          ...answers({ 200: ImportAnswer }, ['payload_too_large']),
        },
      },
      async (req) => {
        const { tenant, bank } = req.params;
        const space = req.query.space;
        const result: ImportResult = { imported: 0, skipped: 0, failed: [] };
        const batch: Array<{ line: number; record: ImportRecord }> = [];
        const flush = async () => {
          if (batch.length === 0) return;
          const outcomes = await service.importMemories(
            tenant,
            bank,
            batch.map((b) => b.record),
          );
          outcomes.forEach((outcome, i) => {
            if (outcome === 'imported') result.imported++;
            else if (outcome === 'skipped') result.skipped++;
            else result.failed.push({ line: batch[i]!.line, problem: outcome.problem });
          });
          batch.length = 0;
        };
        const take = async (line: number, value: unknown) => {
          const record = importRecord(value, space);
          if ('problem' in record) result.failed.push({ line, problem: record.problem });
          else batch.push({ line, record });
          if (batch.length >= IMPORT_BATCH) await flush();
        };
        const tooLarge = `the body is over ${limit} bytes (MNEMOS_API_MAX_IMPORT_BYTES): the rest was not read; send it in parts`;
        if (req.query.format === 'mem0') {
          const text = await wholeBody(req.raw, limit);
          if (text === undefined) {
            req.raw.resume();
            result.failed.push({ line: 1, problem: tooLarge });
            return result;
          }
          let items: unknown[];
          try {
            items = mem0Memories(JSON.parse(text));
          } catch (error) {
            const problem =
              error instanceof TransferProblem ? error.message : 'is not JSON: a mem0 export is one JSON document';
            result.failed.push({ line: 1, problem });
            return result;
          }
          for (const [i, item] of items.entries()) await take(i + 1, item);
        } else {
          for await (const entry of bodyLines(req.raw, limit)) {
            if ('over' in entry) {
              req.raw.resume();
              result.failed.push({ line: entry.line, problem: tooLarge });
              break;
            }
            if (entry.text.trim() === '') continue;
            let value: unknown;
            try {
              value = JSON.parse(entry.text);
            } catch {
              result.failed.push({ line: entry.line, problem: 'is not JSON' });
              continue;
            }
            await take(entry.line, value);
          }
        }
        await flush();
        return result;
      },
    );
  });
}
