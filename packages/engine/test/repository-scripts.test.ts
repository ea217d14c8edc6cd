// The root package.json's scripts are what the README and the docs tell people to run: each name is defined once
// (JSON keeps the last of two, silently), and each file a script runs exists.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './helpers/engine.js';

const text = readFileSync(join(REPO_ROOT, 'package.json'), 'utf8');
const names = scriptNames(text);
const scripts = (JSON.parse(text) as { scripts: Record<string, string> }).scripts;

describe('the repository scripts', () => {
  it('name each script once', () => {
    assert.ok(names.length >= 10, `found ${names.length} scripts`);
    assert.deepEqual(
      names.filter((n, i) => names.indexOf(n) !== i),
      [],
    );
  });

  it('run files that exist', () => {
    const files = Object.values(scripts).flatMap((s) => [
      ...s.matchAll(/(?:packages|scripts)\/[\w./-]+\.(?:ts|mjs|js)/g),
    ]);
    assert.ok(files.length >= 5);
    for (const [file] of files) assert.ok(existsSync(join(REPO_ROOT, file)), `${file} does not exist`);
  });
});

/** The keys of the `scripts` object as written, repeats kept (a script's text may hold braces, e.g. `${VAR:-1}`). */
function scriptNames(json: string): string[] {
  const start = json.indexOf('{', json.indexOf('"scripts"'));
  const keys: string[] = [];
  let depth = 0;
  let expectKey = true;
  for (let i = start; i < json.length; i++) {
    const c = json[i]!;
    if (c === '"') {
      // A JSON string: to its closing quote, past escaped characters.
      let end = i + 1;
      while (json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(JSON.parse(json.slice(i, end + 1)) as string);
      i = end;
    } else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) break;
    else if (c === ':') expectKey = false;
    else if (c === ',') expectKey = true;
  }
  return keys;
}
