import { Problem } from '@mnemos/problems';
import type { Metadata } from '../memory/types.js';
import { checkMetadata } from '../wire/metadata.js';
import { UsageError } from './io.js';

/**
 * Reads `--metadata` pairs into a memory's metadata, httpie's rule: `key=value` sets a string (whatever it looks
 * like), `key:=json` sets any JSON value (`count:=3`, `done:=true`, `owner:=null`, `flags:='["a"]'`,
 * `owner:='{"name": "ann"}'`). A key given twice takes its last value. The whole is checked against the bounds the API
 * checks (wire/metadata.ts), so what the API would refuse is a usage mistake here, named by its pointer.
 */
export function metadataArg(pairs: readonly string[] | undefined): Metadata | undefined {
  if (pairs === undefined || pairs.length === 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const isJson = at > 0 && pair[at - 1] === ':';
    const key = pair.slice(0, isJson ? at - 1 : at);
    if (at < 0 || key === '')
      throw new UsageError(`--metadata takes key=text or key:=json, e.g. source=cli or count:=3 (got "${pair}")`);
    out[key] = isJson ? jsonValue(key, pair.slice(at + 1)) : pair.slice(at + 1);
  }
  try {
    return checkMetadata(out, '/metadata');
  } catch (error) {
    const field = error instanceof Problem ? error.errors?.[0] : undefined;
    if (field === undefined) throw error;
    throw new UsageError(`--metadata: ${field.pointer} ${field.detail}`);
  }
}

function jsonValue(key: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(
      `--metadata ${key}:= takes a JSON value (a number, true, false, null, "text", [...] or {...}); ` +
        `for text write ${key}=${text} (got ${JSON.stringify(text)})`,
    );
  }
}
