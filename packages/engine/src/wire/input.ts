import { invalidField as invalid, problem } from '@mnemos/problems';
import type { Filter } from '../filters/ast.js';
import { FilterError, parseFilter } from '../filters/parse.js';
import { DEFAULT_SPACE } from '../memory/types.js';
import { FIRST_STORABLE_TIME, isIsoDateText, isoDate, ISO_DATE_EXAMPLE, LAST_STORABLE_TIME } from '../util/iso-date.js';
import type {
  BankChanges,
  MemoryEdit,
  MemorySelection,
  MemorySet,
  Partition,
  RecallQuery,
  ReflectRequest,
  RetainItem,
  RetainRequest,
  TagsMatch,
} from '../service/types.js';
import { checkMetadata } from './metadata.js';
import { MAX_RETAIN_ENTRIES } from './schemas.js';
import type { Static } from '@sinclair/typebox';
import type { BankBodyT, MemoryPatchBody, MemorySetBody, RecallBodyT, ReflectBodyT, RetainBodyT } from './schemas.js';

/** Turns wire values into engine values, with the leniency Hindsight clients rely on; errors are 400 problems. */

/** ISO 8601 date or date-time; naive times are UTC; "unset" means no date (null); absent means undefined. */
export function parseTimestamp(value: string | null | undefined, pointer: string): Date | null | undefined {
  if (value === undefined || value === null) return undefined;
  const v = value.trim();
  if (v === 'unset') return null;
  if (!isIsoDateText(v)) {
    throw invalid(
      pointer,
      `must be an ISO 8601 date or date-time such as ${ISO_DATE_EXAMPLE} (got ${JSON.stringify(value.slice(0, 40))})`,
    );
  }
  const date = isoDate(v);
  if (Number.isNaN(date.getTime())) throw invalid(pointer, 'is not a real date');
  return date;
}

/** An instant (RFC 3339, or the dates parseTimestamp takes); absent or null means undefined, "unset" is refused. */
export function parseInstant(value: string | null | undefined, pointer: string): Date | undefined {
  const date = parseTimestamp(value, pointer);
  if (date === null) throw invalid(pointer, 'must be a date-time such as 2024-01-15T10:30:00Z, not "unset"');
  return date;
}

/**
 * An `expires_at`: an RFC 3339 date-time or a date (midnight UTC); null keeps the memory; absent is undefined. A time
 * already past is taken: the memory is forgotten at once (docs/api.md, "Expiry").
 */
export function parseExpiry(value: string | null | undefined, pointer: string): Date | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const date = parseInstant(value, pointer);
  if (date === undefined) return undefined;
  if (date.getTime() < FIRST_STORABLE_TIME || date.getTime() > LAST_STORABLE_TIME) {
    throw invalid(pointer, 'must lie between 0001-01-01 and 9999-12-31 (UTC)');
  }
  return date;
}

/** A read's validity choice on the wire (`as_of`, `include_superseded`), as recall, reflect and the list take it. */
export function validityChoice(
  b: { as_of?: string | null | undefined; include_superseded?: boolean | null | undefined },
  at: '/' | '/query/',
): { asOf: Date | undefined; includeSuperseded: boolean } {
  return {
    asOf: parseInstant(b.as_of, `${at}as_of`),
    includeSuperseded: b.include_superseded ?? false,
  };
}

/** Tags as a list, a JSON-encoded list, or a single bare string. */
export function parseTags(value: string[] | string | null | undefined, pointer: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  let list: unknown = value;
  if (typeof value === 'string') {
    const t = value.trim();
    if (t.startsWith('[')) {
      try {
        list = JSON.parse(t);
      } catch {
        throw invalid(pointer, 'is a string that looks like a JSON list but is not valid JSON');
      }
    } else {
      list = t === '' ? [] : [t];
    }
  }
  if (!Array.isArray(list) || list.some((x) => typeof x !== 'string'))
    throw invalid(pointer, 'must be a list of strings');
  return (list as string[]).map((tag, i) => checkText(tag, `${pointer}/${i}`));
}

/** Postgres text cannot hold NUL characters; say so instead of failing in the database. */
export function checkText(value: string, pointer: string): string {
  if (value.includes('\u0000'))
    throw invalid(pointer, 'contains a NUL character (\\u0000), which cannot be stored; remove it');
  return value;
}

function nonBlank(content: string, pointer: string): string {
  checkText(content, pointer);
  if (content.trim() === '') throw invalid(pointer, 'must not be empty or only whitespace');
  return content;
}

type RetainDefaults = Omit<RetainItem, 'content' | 'entities'>;
type RetainMessage = NonNullable<RetainBodyT['messages']>[number];

/** The longest speaker name: recall reads a memory's speaker from a "Name: " prefix of at most this length. */
const MAX_SPEAKER_CHARS = 40;

/**
 * A chat message as an item: stored as "speaker: content", the form recall's speaker signal and fact extraction read,
 * with `role` and `speaker` in its metadata. The speaker is the message's name, else its role.
 */
function messageItem(message: RetainMessage, at: string, defaults: RetainDefaults): RetainItem {
  const content = nonBlank(message.content, `${at}/content`).trim();
  const name = message.name?.trim() ?? '';
  if (message.name !== undefined && message.name !== null) checkText(message.name, `${at}/name`);
  if (name.length > MAX_SPEAKER_CHARS || /[:\r\n]/.test(name)) {
    throw invalid(`${at}/name`, `must be at most ${MAX_SPEAKER_CHARS} characters, without a colon or line break`);
  }
  const speaker = name === '' ? message.role : name;
  return {
    ...defaults,
    content: `${speaker}: ${content}`,
    timestamp:
      message.timestamp === undefined ? defaults.timestamp : parseTimestamp(message.timestamp, `${at}/timestamp`),
    metadata: { ...defaults.metadata, role: message.role, speaker },
    entities: undefined,
    supersedes: message.supersedes,
    expiresAt:
      message.expires_at === undefined ? defaults.expiresAt : parseExpiry(message.expires_at, `${at}/expires_at`),
    pointer: at,
  };
}

/**
 * The retain body forms: `{content, ...}`, `{items: [...]}` and `{messages: [...]}` (items and messages may come
 * together: the items first, then the messages). Top-level fields are defaults for items and messages.
 */
export function retainItems(body: RetainBodyT): RetainItem[] {
  if (body.items === undefined && body.content === undefined && body.messages === undefined) {
    throw problem('validation_failed', 'retainWithoutContent', {
      errors: [{ pointer: '/content', detail: 'is required when items and messages are absent' }],
    });
  }
  if (body.content !== undefined && (body.items !== undefined || body.messages !== undefined)) {
    throw invalid('/content', 'cannot be sent together with items or messages; send one form or the other');
  }
  const entries = (body.items?.length ?? 0) + (body.messages?.length ?? 0);
  if (entries > MAX_RETAIN_ENTRIES) {
    throw invalid('/messages', `items and messages together must be at most ${MAX_RETAIN_ENTRIES} (got ${entries})`);
  }
  const defaults = {
    timestamp: parseTimestamp(body.timestamp, '/timestamp'),
    context: body.context ?? undefined,
    metadata: checkMetadata(body.metadata, '/metadata'),
    tags: parseTags(body.tags, '/tags'),
    documentId: body.document_id ?? undefined,
    expiresAt: parseExpiry(body.expires_at, '/expires_at'),
  };
  if (defaults.context !== undefined) checkText(defaults.context, '/context');
  if (body.content !== undefined) {
    const content = nonBlank(body.content, '/content');
    return [{ ...defaults, content, entities: undefined, supersedes: body.supersedes, pointer: '' }];
  }
  if (body.supersedes !== undefined) {
    throw invalid('/supersedes', 'goes with content; with items or messages, give each its own supersedes');
  }
  const messages = (body.messages ?? []).map((m, i) => messageItem(m, `/messages/${i}`, defaults));
  return [...itemsOf(body, defaults), ...messages];
}

function itemsOf(body: RetainBodyT, defaults: RetainDefaults): RetainItem[] {
  return (body.items ?? []).map((item, i) => {
    const at = `/items/${i}`;
    const context = item.context ?? defaults.context;
    if (context !== undefined) checkText(context, `${at}/context`);
    return {
      content: nonBlank(item.content, `${at}/content`),
      timestamp: item.timestamp === undefined ? defaults.timestamp : parseTimestamp(item.timestamp, `${at}/timestamp`),
      context,
      metadata: checkMetadata(item.metadata, `${at}/metadata`) ?? defaults.metadata,
      tags: parseTags(item.tags, `${at}/tags`) ?? defaults.tags,
      documentId: item.document_id ?? defaults.documentId,
      entities: item.entities?.map((e) => checkText(e.text, `${at}/entities`)) ?? undefined,
      supersedes: item.supersedes,
      expiresAt: item.expires_at === undefined ? defaults.expiresAt : parseExpiry(item.expires_at, `${at}/expires_at`),
      pointer: at,
    };
  });
}

/** A body's filter expression (absent or null: none); a bad node answers 400 with its pointer. */
export function bodyFilter(value: unknown, pointer = '/filter'): Filter | undefined {
  return value === undefined || value === null ? undefined : readFilter(value, pointer, 'body');
}

/** A query string's `filter`: the expression as JSON text. */
export function queryFilter(text: string | undefined): Filter | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('/query/filter', 'is not JSON: send the filter expression as JSON text (URL-encoded)', 'query');
  }
  return readFilter(value, '/query/filter', 'query');
}

function readFilter(value: unknown, pointer: string, where: 'body' | 'query'): Filter {
  try {
    return parseFilter(value, pointer);
  } catch (e) {
    if (e instanceof FilterError) throw invalid(e.pointer, e.detail, where);
    throw e;
  }
}

/** How many tokens of memories a recall answers when the caller does not say. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Header by which a caller (a gateway holding quota) bounds how many new memories one retain may store. */
export const MAX_NEW_MEMORIES_HEADER = 'x-mnemos-max-new-memories';

/** The bound a request sets with MAX_NEW_MEMORIES_HEADER, if any. */
export function maxNewMemories(headers: Record<string, string | string[] | undefined>): number | undefined {
  const value = headers[MAX_NEW_MEMORIES_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) {
    throw problem('validation_failed', 'maxNewMemoriesHeader', { header: MAX_NEW_MEMORIES_HEADER });
  }
  return Number(value);
}

export function retainRequest(partition: Partition, body: RetainBodyT, maxNew?: number): RetainRequest {
  return { partition, items: retainItems(body), async: body.async === true, maxNewMemories: maxNew };
}

export function recallQuery(tenant: string, bankId: string, body: RecallBodyT): RecallQuery {
  checkText(body.query, '/query');
  return {
    tenant,
    bankId,
    space: body.space ?? DEFAULT_SPACE,
    query: body.query,
    maxTokens: body.max_tokens ?? DEFAULT_MAX_TOKENS,
    budget: body.budget ?? 'mid',
    includeOrg: body.include_org ?? false,
    types: body.types ?? undefined,
    tags: parseTags(body.tags, '/tags'),
    tagsMatch: (body.tags_match ?? 'any') as TagsMatch,
    filter: bodyFilter(body.filter),
    queryTimestamp: parseTimestamp(body.query_timestamp, '/query_timestamp') ?? new Date(),
    trace: body.trace ?? false,
    minRelevance: body.min_relevance ?? undefined,
    ...validityChoice(body, '/'),
  };
}

/** Reflect's body; `fact_types` is the Hindsight name of `types`. */
export function reflectRequest(tenant: string, bankId: string, body: ReflectBodyT): ReflectRequest {
  const query = checkText(body.query, '/query');
  if (query.trim() === '') throw invalid('/query', 'must not be empty or only whitespace');
  const context = body.context ?? undefined;
  if (context !== undefined) checkText(context, '/context');
  if (body.fact_types !== undefined && body.fact_types !== null && body.fact_types.length === 0) {
    throw invalid('/fact_types', 'must name at least one type (or be omitted for all)');
  }
  const include = (body.include ?? {}) as Record<string, unknown>;
  return {
    tenant,
    bankId,
    space: body.space ?? undefined,
    query,
    context,
    budget: body.budget ?? 'low',
    types: body.fact_types ?? body.types ?? undefined,
    tags: parseTags(body.tags, '/tags'),
    tagsMatch: (body.tags_match ?? undefined) as TagsMatch | undefined,
    filter: bodyFilter(body.filter),
    queryTimestamp: parseTimestamp(body.query_timestamp, '/query_timestamp') ?? undefined,
    responseSchema: body.response_schema ?? undefined,
    includeFacts: include['facts'] !== undefined && include['facts'] !== null,
    ...validityChoice(body, '/'),
  };
}

/** A bank body's changes; `reflect_mission` and `background` are the Hindsight names of `mission`. */
export function bankChanges(body: BankBodyT): BankChanges {
  const mission = body.mission ?? body.reflect_mission ?? body.background ?? undefined;
  for (const [field, value] of [
    ['name', body.name],
    ['mission', mission],
  ] as const) {
    if (typeof value === 'string') checkText(value, `/${field}`);
  }
  const d = body.disposition ?? undefined;
  return {
    name: body.name ?? undefined,
    mission,
    disposition: d
      ? {
          ...(d.skepticism !== undefined ? { skepticism: d.skepticism } : {}),
          ...(d.literalism !== undefined ? { literalism: d.literalism } : {}),
          ...(d.empathy !== undefined ? { empathy: d.empathy } : {}),
        }
      : undefined,
    space: body.space ?? undefined,
    history: body.history ?? undefined,
    retentionDays: body.retention_days,
  };
}

/** The fields a bulk update's `set` and a PATCH share, read the same way under `at` (their place in the body). */
function settableFields(
  b: Pick<Static<typeof MemorySetBody>, 'tags' | 'metadata' | 'state' | 'expires_at'>,
  at: string,
): MemorySet {
  const fields: MemorySet = {};
  const tags = parseTags(b.tags, `${at}/tags`);
  if (tags !== undefined) fields.tags = tags;
  const metadata = checkMetadata(b.metadata, `${at}/metadata`);
  if (metadata !== undefined) fields.metadata = metadata;
  if (b.state !== undefined) fields.state = b.state;
  if (b.expires_at !== undefined) fields.expiresAt = parseExpiry(b.expires_at, `${at}/expires_at`) ?? null;
  return fields;
}

/** A bulk update's `set`: only the fields it sends (a null metadata changes nothing); at least one. */
export function memorySet(b: Static<typeof MemorySetBody>): MemorySet {
  const set = settableFields(b, '/set');
  if (Object.keys(set).length === 0) {
    throw invalid('/set', 'names nothing to change: give metadata, tags, state or expires_at');
  }
  return set;
}

/** A bulk update's selection: `filter` or `ids`, exactly one. */
export function memorySelection(b: { filter?: unknown; ids?: string[] | undefined }): MemorySelection {
  const filter = bodyFilter(b.filter);
  if (filter !== undefined && b.ids !== undefined) {
    throw invalid('/ids', 'cannot be combined with filter: select the memories by one or the other');
  }
  if (filter !== undefined) return { filter };
  if (b.ids !== undefined) return { ids: b.ids };
  throw invalid('/filter', 'is required, or ids: it selects the memories to update');
}

/** A memory PATCH body as an edit: only the fields it sends (a null metadata changes nothing). */
export function memoryEdit(b: typeof MemoryPatchBody.static): MemoryEdit {
  const edit: MemoryEdit = {};
  if (b.text !== undefined) edit.text = checkText(b.text, '/text');
  if (b.context !== undefined) edit.context = b.context === null ? null : checkText(b.context, '/context');
  Object.assign(edit, settableFields(b, ''));
  if (b.occurred_at !== undefined) edit.occurredAt = parseTimestamp(b.occurred_at, '/occurred_at') ?? null;
  if (b.valid_from !== undefined) edit.validFrom = parseInstant(b.valid_from, '/valid_from') ?? null;
  if (b.valid_to !== undefined) edit.validTo = parseInstant(b.valid_to, '/valid_to') ?? null;
  if (edit.validFrom && edit.validTo && edit.validTo <= edit.validFrom) {
    throw invalid('/valid_to', 'must be later than valid_from');
  }
  return edit;
}
