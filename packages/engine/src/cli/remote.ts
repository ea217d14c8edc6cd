import { parseArgs, type ParseArgsConfig } from 'node:util';
import {
  Mnemos,
  MnemosError,
  type Filter,
  type ImportResult,
  type MemoryPatch,
  type MemorySet,
  type RecallOptions,
  type RetainOptions,
} from '@mnemos/client';
import { shortDate, table } from './format.js';
import { UsageError, type CliIo } from './io.js';
import { metadataArg } from './metadata-arg.js';
import { errorMessage } from '../util/error-message.js';

/** `mnemos retain|recall|reflect|banks|memories`: the HTTP API through @mnemos/client, tables or --json. */

const COMMON = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  tenant: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const REMOTE_COMMANDS = ['retain', 'recall', 'reflect', 'banks', 'memories', 'export', 'import'] as const;
export type RemoteCommand = (typeof REMOTE_COMMANDS)[number];

/** The client for MNEMOS_URL / MNEMOS_API_KEY, or --url / --api-key. */
export function clientFrom(
  values: { url?: string | undefined; 'api-key'?: string | undefined; tenant?: string | undefined },
  env: CliIo['env'],
): Mnemos {
  const baseUrl = values.url ?? env['MNEMOS_URL'] ?? 'http://localhost:8888';
  const apiKey = values['api-key'] ?? env['MNEMOS_API_KEY'];
  return new Mnemos({
    baseUrl,
    apiKey: apiKey === '' ? undefined : apiKey,
    tenant: values.tenant ?? env['MNEMOS_TENANT'],
  });
}

function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

function int(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number (got "${value}")`);
  return Number(value);
}

function fraction(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new UsageError(`--${name} must be a number from 0 to 1 (got "${value}")`);
  return n;
}

/** `--filter`: a filter expression as JSON text, read into the value sent; the engine checks the expression itself. */
function filterArg(value: string | undefined): Filter | undefined {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as Filter;
  } catch {
    throw new UsageError(
      `--filter must be a JSON filter expression, e.g. '{"metadata.project": "apollo"}' (got ${value})`,
    );
  }
}

function need(value: string | undefined, what: string): string {
  if (value === undefined || value === '') throw new UsageError(`missing ${what}`);
  return value;
}

const memoriesCount = (n: number) => `${n} memor${n === 1 ? 'y' : 'ies'}`;

/** Which memories a `memories update|delete` works on: one <id>, or --filter, or --id (several), never two of these. */
function selection(
  positional: readonly string[],
  filter: string | undefined,
  ids: string[] | undefined,
  action: string,
): { memoryId: string } | { filter: Filter } | { ids: string[] } {
  if (positional.length > 1)
    throw new UsageError(`memories ${action} takes one <id>; for several, give --id <id> for each`);
  const memoryId = positional[0];
  const given = [memoryId, filter, ids].filter((g) => g !== undefined).length;
  if (given !== 1)
    throw new UsageError(
      `memories ${action} takes one of: a memory <id>, --filter json, or --id <id> (repeatable)${given > 1 ? ', not several' : ''}`,
    );
  if (memoryId !== undefined) return { memoryId };
  if (filter !== undefined) return { filter: filterArg(filter)! };
  return { ids: ids! };
}

function stateArg(value: string | undefined): 'valid' | 'invalidated' | undefined {
  if (value === undefined || value === 'valid' || value === 'invalidated') return value;
  throw new UsageError(`--state is valid or invalidated (got "${value}")`);
}

/** `--expires-at`: a time, or `never` to keep the memory (the API's null). */
const expiresArg = (value: string): string | null => (value === 'never' ? null : value);

const json = (io: CliIo, value: unknown) => io.stdout(`${JSON.stringify(value, null, 2)}\n`);

/** After a page of a list: how many of how many, and the --cursor that reads the next page (stable under writes). */
function morePages(io: CliIo, shown: number, total: number, nextCursor: string | null | undefined): void {
  if (nextCursor !== null && nextCursor !== undefined)
    io.stdout(`(${shown} of ${total}; --cursor ${nextCursor} for the next page)\n`);
}

/** An import is sent in parts of at most this many lines and bytes, each well within any server's import limit. */
const IMPORT_PART_LINES = 1000;
const IMPORT_PART_CHARS = 1024 * 1024;

/** Standard input's lines as they arrive. */
async function* stdinLines(io: CliIo): AsyncGenerator<string> {
  const chunks = io.stdinText?.() ?? [await io.readStdin()];
  let pending = '';
  for await (const chunk of chunks) {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    yield* lines;
  }
  if (pending !== '') yield pending;
}

/** Imports NDJSON from standard input in parts; failed lines are numbered in the whole input. */
async function importLines(client: Mnemos, bank: string, space: string | undefined, io: CliIo): Promise<ImportResult> {
  const total: ImportResult = { imported: 0, skipped: 0, failed: [] };
  let part: string[] = [];
  let chars = 0;
  let first = 1;
  const send = async () => {
    if (part.length === 0) return;
    const out = await client.importMemories(bank, part.join('\n'), { space });
    total.imported += out.imported;
    total.skipped += out.skipped;
    for (const f of out.failed) total.failed.push({ line: f.line + first - 1, problem: f.problem });
    first += part.length;
    part = [];
    chars = 0;
  };
  for await (const line of stdinLines(io)) {
    part.push(line);
    chars += line.length + 1;
    if (part.length >= IMPORT_PART_LINES || chars >= IMPORT_PART_CHARS) await send();
  }
  await send();
  return total;
}

/** Runs one memory command; answers the exit code (0 ok, 1 failed call, 2 usage mistake). */
export async function remote(command: RemoteCommand, args: string[], io: CliIo): Promise<number> {
  let asJson = args.includes('--json');
  try {
    switch (command) {
      case 'retain': {
        const { values, positionals } = parse(args, {
          space: { type: 'string' },
          tag: { type: 'string', multiple: true },
          context: { type: 'string' },
          timestamp: { type: 'string' },
          metadata: { type: 'string', multiple: true },
          'document-id': { type: 'string' },
          'expires-at': { type: 'string' },
        });
        asJson = values.json === true;
        const [bank, ...words] = positionals;
        let content = words.join(' ');
        if (content === '' || content === '-') content = (await io.readStdin()).trim();
        const options: RetainOptions = {
          space: values.space,
          tags: values.tag,
          context: values.context,
          timestamp: values.timestamp,
          metadata: metadataArg(values.metadata),
          document_id: values['document-id'],
          expires_at: values['expires-at'],
        };
        const out = await clientFrom(values, io.env).retain(
          need(bank, 'bank id: mnemos retain <bank> <text>'),
          need(content, 'text to retain (as arguments or on standard input)'),
          options,
        );
        if (asJson) json(io, out);
        else
          io.stdout(
            `Retained in bank ${out.bank_id}${values.space ? ` (space ${values.space})` : ''}: ${out.memory_ids.join(', ')}\n`,
          );
        return 0;
      }
      case 'recall': {
        const { values, positionals } = parse(args, {
          space: { type: 'string' },
          budget: { type: 'string' },
          'max-tokens': { type: 'string' },
          type: { type: 'string', multiple: true },
          tag: { type: 'string', multiple: true },
          'include-org': { type: 'boolean' },
          'min-relevance': { type: 'string' },
          filter: { type: 'string' },
        });
        asJson = values.json === true;
        const [bank, ...words] = positionals;
        const budget = values.budget;
        if (budget !== undefined && !['low', 'mid', 'high'].includes(budget))
          throw new UsageError('--budget is low, mid or high');
        const options: RecallOptions = {
          space: values.space,
          budget: budget,
          max_tokens: int(values['max-tokens'], 'max-tokens'),
          types: values.type,
          tags: values.tag,
          include_org: values['include-org'],
          min_relevance: fraction(values['min-relevance'], 'min-relevance'),
        };
        const filter = filterArg(values.filter);
        if (filter !== undefined) options.filter = filter;
        const out = await clientFrom(values, io.env).recall(
          need(bank, 'bank id: mnemos recall <bank> <query>'),
          need(words.join(' '), 'query'),
          options,
        );
        if (asJson) return (json(io, out), 0);
        if (out.results.length === 0) {
          io.stdout('No memories found.\n');
          return 0;
        }
        io.stdout(
          table(
            ['SCORE', 'TYPE', 'DATE', 'ID', 'TEXT'],
            out.results.map((r) => [
              r.score.toFixed(3),
              r.org ? `${r.type} (org)` : r.type,
              shortDate(r.occurred_at ?? r.created_at),
              r.id.slice(0, 8),
              r.text,
            ]),
            io.columns,
          ),
        );
        return 0;
      }
      case 'reflect': {
        const { values, positionals } = parse(args, { space: { type: 'string' }, budget: { type: 'string' } });
        asJson = values.json === true;
        const [bank, ...words] = positionals;
        const budget = values.budget;
        if (budget !== undefined && !['low', 'mid', 'high'].includes(budget))
          throw new UsageError('--budget is low, mid or high');
        const out = await clientFrom(values, io.env).reflect(
          need(bank, 'bank id: mnemos reflect <bank> <query>'),
          need(words.join(' '), 'query'),
          {
            space: values.space,
            budget: budget as RecallOptions['budget'],
          },
        );
        if (asJson) return (json(io, out), 0);
        io.stdout(`${out.text}\n`);
        if (out.citations.length > 0) io.stdout(`\nCitations: ${out.citations.join(', ')}\n`);
        return 0;
      }
      case 'banks': {
        const { values, positionals } = parse(args, {
          q: { type: 'string' },
          limit: { type: 'string' },
          offset: { type: 'string' },
          cursor: { type: 'string' },
          yes: { type: 'boolean' },
        });
        asJson = values.json === true;
        const client = clientFrom(values, io.env);
        const [action = 'list', bank] = positionals;
        if (action === 'list') {
          const out = await client.listBanks({
            q: values.q,
            limit: int(values.limit, 'limit'),
            offset: int(values.offset, 'offset'),
            cursor: values.cursor,
          });
          if (asJson) return (json(io, out), 0);
          if (out.banks.length === 0) return (io.stdout('No banks yet: mnemos retain <bank> <text> creates one.\n'), 0);
          io.stdout(
            table(
              ['BANK', 'MEMORIES', 'LAST WRITE', 'SPACE', 'NAME'],
              out.banks.map((b) => [b.bank_id, String(b.memory_count), shortDate(b.last_write_at), b.space, b.name]),
              io.columns,
            ),
          );
          morePages(io, out.banks.length, out.total, out.next_cursor);
          return 0;
        }
        if (action === 'get') {
          const out = await client.getBank(need(bank, 'bank id: mnemos banks get <bank>'));
          if (asJson) return (json(io, out), 0);
          io.stdout(
            table(
              ['FIELD', 'VALUE'],
              [
                ['bank', out.bank_id],
                ['name', out.name],
                ['space', out.space],
                ['memories', String(out.memory_count)],
                ['mission', out.mission],
                ['created', shortDate(out.created_at)],
                ['last write', shortDate(out.last_write_at)],
              ],
              io.columns,
            ),
          );
          return 0;
        }
        if (action === 'delete') {
          const id = need(bank, 'bank id: mnemos banks delete <bank> --yes');
          if (values.yes !== true)
            throw new UsageError(`deleting bank "${id}" erases all its memories; add --yes to confirm`);
          const out = await client.deleteBank(id);
          if (asJson) return (json(io, out), 0);
          io.stdout(`Deleted bank ${id} (${out.deleted_count} memories).\n`);
          return 0;
        }
        throw new UsageError(`unknown banks action "${action}" (list, get, delete)`);
      }
      case 'export': {
        const { values, positionals } = parse(args, { space: { type: 'string' } });
        const bank = need(positionals[0], 'bank id: mnemos export <bank> > bank.ndjson');
        for await (const text of clientFrom(values, io.env).exportText(bank, { space: values.space })) io.stdout(text);
        return 0;
      }
      case 'import': {
        const { values, positionals } = parse(args, { space: { type: 'string' }, format: { type: 'string' } });
        asJson = values.json === true;
        const bank = need(positionals[0], 'bank id: mnemos import <bank> < bank.ndjson');
        if (values.format !== undefined && values.format !== 'ndjson' && values.format !== 'mem0')
          throw new UsageError('--format is ndjson (an export, the default) or mem0 (a mem0 get_all JSON document)');
        const client = clientFrom(values, io.env);
        const out =
          values.format === 'mem0'
            ? await client.importMemories(bank, await io.readStdin(), { space: values.space, format: 'mem0' })
            : await importLines(client, bank, values.space, io);
        if (asJson) json(io, out);
        else {
          io.stdout(`Imported ${out.imported}, skipped ${out.skipped} already there, ${out.failed.length} failed.\n`);
          for (const f of out.failed) io.stderr(`line ${f.line}: ${f.problem}\n`);
        }
        return out.failed.length === 0 ? 0 : 1;
      }
      case 'memories': {
        const { values, positionals } = parse(args, {
          space: { type: 'string' },
          type: { type: 'string' },
          q: { type: 'string' },
          limit: { type: 'string' },
          offset: { type: 'string' },
          cursor: { type: 'string' },
          filter: { type: 'string' },
          id: { type: 'string', multiple: true },
          text: { type: 'string' },
          tag: { type: 'string', multiple: true },
          metadata: { type: 'string', multiple: true },
          context: { type: 'string' },
          state: { type: 'string' },
          'expires-at': { type: 'string' },
          'dry-run': { type: 'boolean' },
          yes: { type: 'boolean' },
        });
        asJson = values.json === true;
        const client = clientFrom(values, io.env);
        const [action, bank, ...ids] = positionals;
        const id = ids[0];
        if (action === 'list') {
          const out = await client.listMemories(need(bank, 'bank id: mnemos memories list <bank>'), {
            space: values.space,
            type: values.type,
            q: values.q,
            limit: int(values.limit, 'limit') ?? 20,
            offset: int(values.offset, 'offset'),
            cursor: values.cursor,
            filter: filterArg(values.filter),
          });
          if (asJson) return (json(io, out), 0);
          if (out.items.length === 0) return (io.stdout('No memories.\n'), 0);
          io.stdout(
            table(
              ['ID', 'TYPE', 'SPACE', 'DATE', 'TEXT'],
              out.items.map((m) => [m.id, m.type, m.space, shortDate(m.occurred_at ?? m.created_at), m.text]),
              io.columns,
            ),
          );
          morePages(io, out.items.length, out.total, out.next_cursor);
          return 0;
        }
        if (action === 'get' && ids.length > 1) {
          const out = await client.getMemories(need(bank, 'bank id'), ids, { space: values.space });
          if (asJson) return (json(io, out), 0);
          io.stdout(
            table(
              ['ID', 'TYPE', 'DATE', 'TEXT'],
              out.items.map((r) =>
                r.memory === null
                  ? [r.id, '-', '-', '(not found)']
                  : [r.id, r.memory.type, shortDate(r.memory.occurred_at ?? r.memory.created_at), r.memory.text],
              ),
              io.columns,
            ),
          );
          return 0;
        }
        if (action === 'get') {
          const out = await client.getMemory(
            need(bank, 'bank id'),
            need(id, 'memory id: mnemos memories get <bank> <id> [<id>...]'),
          );
          if (asJson) return (json(io, out), 0);
          io.stdout(
            table(
              ['FIELD', 'VALUE'],
              [
                ['id', out.id],
                ['bank', out.bank_id],
                ['space', out.space],
                ['type', out.type],
                ['date', shortDate(out.occurred_at ?? out.created_at)],
                ['tags', out.tags.join(', ')],
                ...(Object.keys(out.metadata).length > 0 ? [['metadata', JSON.stringify(out.metadata)]] : []),
                ...(out.expires_at !== null ? [['expires', shortDate(out.expires_at)]] : []),
                ['text', out.text],
              ],
              Math.max(io.columns ?? 0, 10_000),
            ),
          );
          return 0;
        }
        if (action === 'update') {
          const which = selection(ids, values.filter, values.id, 'update');
          const state = stateArg(values.state);
          const metadata = metadataArg(values.metadata);
          if ('memoryId' in which) {
            const patch: MemoryPatch = {
              ...(values.text !== undefined ? { text: values.text } : {}),
              ...(values.tag !== undefined ? { tags: values.tag } : {}),
              ...(metadata !== undefined ? { metadata } : {}),
              ...(values.context !== undefined ? { context: values.context } : {}),
              ...(state !== undefined ? { state } : {}),
              ...(values['expires-at'] !== undefined ? { expires_at: expiresArg(values['expires-at']) } : {}),
            };
            if (Object.keys(patch).length === 0)
              throw new UsageError(
                'nothing to change: give --text, --tag, --metadata, --context, --state or --expires-at',
              );
            const out = await client.updateMemory(need(bank, 'bank id'), which.memoryId, patch);
            if (asJson) return (json(io, out), 0);
            io.stdout(`Updated memory ${out.id}.\n`);
            return 0;
          }
          if (values.text !== undefined || values.context !== undefined)
            throw new UsageError(
              'an update by --filter or --id sets --tag, --metadata, --state or --expires-at; edit text or context one memory at a time (mnemos memories update <bank> <id>)',
            );
          const set: MemorySet = {
            ...(values.tag !== undefined ? { tags: values.tag } : {}),
            ...(metadata !== undefined ? { metadata } : {}),
            ...(state !== undefined ? { state } : {}),
            ...(values['expires-at'] !== undefined ? { expires_at: expiresArg(values['expires-at']) } : {}),
          };
          if (Object.keys(set).length === 0) {
            throw new UsageError('nothing to set: give --tag, --metadata, --state or --expires-at');
          }
          const out = await client.updateMemories(need(bank, 'bank id'), which, set, { space: values.space });
          if (asJson) return (json(io, out), 0);
          io.stdout(`Updated ${memoriesCount(out.updated_count)}.\n`);
          return 0;
        }
        if (action === 'delete') {
          const which = selection(ids, values.filter, values.id, 'delete');
          if ('memoryId' in which) {
            const out = await client.deleteMemory(need(bank, 'bank id'), which.memoryId);
            if (asJson) return (json(io, out), 0);
            io.stdout(`Deleted ${memoriesCount(out.deleted_count)}.\n`);
            return 0;
          }
          if (!('filter' in which))
            throw new UsageError('delete takes one <id> or a --filter (memories delete <bank> --filter json --yes)');
          const dryRun = values['dry-run'] === true;
          if (!dryRun && values.yes !== true)
            throw new UsageError(
              'deleting by --filter erases every memory it passes; add --yes to confirm, or --dry-run to count them',
            );
          const out = await client.deleteMatching(need(bank, 'bank id'), which.filter, {
            space: values.space,
            dry_run: dryRun,
          });
          if (asJson) return (json(io, out), 0);
          io.stdout(
            dryRun
              ? `${memoriesCount(out.deleted_count)} match (dry run: nothing deleted).\n`
              : `Deleted ${memoriesCount(out.deleted_count)}.\n`,
          );
          return 0;
        }
        throw new UsageError(
          action === undefined
            ? 'missing action: mnemos memories list|get|update|delete <bank> ...'
            : `unknown memories action "${action}" (list, get, update, delete)`,
        );
      }
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`mnemos ${command}: ${error.message}; run mnemos help\n`);
      return 2;
    }
    if (error instanceof MnemosError) {
      if (asJson) io.stderr(`${JSON.stringify({ error: error.toJSON() })}\n`);
      else
        io.stderr(
          `mnemos ${command}: ${error.detail} [${error.code}${error.status ? `, HTTP ${error.status}` : ''}]\n`,
        );
      return 1;
    }
    throw error;
  }
}
