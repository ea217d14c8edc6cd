// Reading the engine's MCP answer (JSON-RPC, one message or a batch): which tool calls succeeded (failures, a JSON-RPC
// error or a tool result with `isError`, arrive with HTTP 200 too), and rewriting list_banks results for limited
// credentials.

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A JSON-RPC id as a map key (ids may be numbers or strings). */
export const rpcKey = (id: unknown): string => JSON.stringify(id ?? null);

function messages(answer: unknown): Json[] {
  return (Array.isArray(answer) ? answer : [answer]).filter(isObject);
}

/** Ids (as rpcKey) of the calls answered with a successful result; a call not answered at all did not succeed. */
export function succeededCalls(answer: unknown): Set<string> {
  const succeeded = new Set<string>();
  for (const m of messages(answer)) {
    const result = m['result'];
    if (!('error' in m) && isObject(result) && result['isError'] !== true) succeeded.add(rpcKey(m['id']));
  }
  return succeeded;
}

/** The first text content of a result parsed as JSON (tool results carry their data so), if it is a JSON object. */
function resultData(result: Json): Json | undefined {
  const first: unknown = Array.isArray(result['content']) ? result['content'][0] : undefined;
  if (!isObject(first) || first['type'] !== 'text' || typeof first['text'] !== 'string') return undefined;
  try {
    const data: unknown = JSON.parse(first['text']);
    return isObject(data) ? data : undefined;
  } catch {
    return undefined;
  }
}

/** The new memories each successful retain result says it stored (`stored_count`), by call id (as rpcKey). */
export function storedCounts(answer: unknown): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of messages(answer)) {
    const result = m['result'];
    if ('error' in m || !isObject(result) || result['isError'] === true) continue;
    const stored = resultData(result)?.['stored_count'];
    if (typeof stored === 'number' && Number.isInteger(stored) && stored >= 0) counts.set(rpcKey(m['id']), stored);
  }
  return counts;
}

/**
 * Rewrites the text content of the answers to the given calls (tool results carry their data as JSON text) with
 * `rewrite`; content that is not JSON is dropped, so nothing unfiltered passes.
 */
export function rewriteToolResults(answer: unknown, ids: ReadonlySet<string>, rewrite: (data: Json) => Json): unknown {
  const rewriteMessage = (m: Json): Json => {
    const result = m['result'];
    if (!ids.has(rpcKey(m['id'])) || !isObject(result) || !Array.isArray(result['content'])) return m;
    const content = (result['content'] as unknown[]).flatMap((part) => {
      if (!isObject(part) || part['type'] !== 'text' || typeof part['text'] !== 'string') return [];
      try {
        const data: unknown = JSON.parse(part['text']);
        return isObject(data) ? [{ ...part, text: JSON.stringify(rewrite(data), null, 2) }] : [];
      } catch {
        return [];
      }
    });
    return { ...m, result: { ...result, content } };
  };
  if (Array.isArray(answer)) return (answer as unknown[]).map((m) => (isObject(m) ? rewriteMessage(m) : m));
  return isObject(answer) ? rewriteMessage(answer) : answer;
}
