// The root package.json's scripts are what the README and the docs tell people to run: each name is defined once
// (JSON keeps the last of two, silently), and each file a script runs exists.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './helpers/engine.js';

const text = readFileSync(join(REPO_ROOT, 'package.json'), 'utf8');
const scriptsBlock = /"scripts":\s*\{([^}]*)\}/.exec(text)?.[1] ?? '';
const names = [...scriptsBlock.matchAll(/^\s*"([^"]+)"\s*:/gm)].map((m) => m[1]!);
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
