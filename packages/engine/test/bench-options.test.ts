import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  listOption,
  numberOption,
  parseBenchCommandLine,
  parseBenchOptions,
  recordedSettings,
} from '../bench/options.js';

test('bench options: values, repeated engine settings, and clear refusals', () => {
  const options = parseBenchOptions(
    ['--sizes', '10000,100000', '--env', 'MNEMOS_A=1', '--env', 'MNEMOS_B=x=y', '--bisect', '0'],
    ['sizes', 'bisect', 'queries'],
    'see the usage',
  );
  assert.deepEqual(options.env, { MNEMOS_A: '1', MNEMOS_B: 'x=y' });
  assert.deepEqual(listOption(options, 'sizes', [1]), [10_000, 100_000]);
  assert.equal(numberOption(options, 'queries', 300), 300);
  assert.equal(numberOption(options, 'bisect', 2, 0), 0);
  assert.throws(() => numberOption(options, 'bisect', 2), /--bisect 0: must be a number above 0/);
  assert.throws(() => parseBenchOptions(['--nope', '1'], ['sizes'], 'see the usage'), /unknown option --nope; see/);
  assert.throws(() => parseBenchOptions(['--env', 'NOEQUALS'], [], 'u'), /--env NOEQUALS: write it as KEY=VALUE/);
  assert.throws(() => parseBenchOptions(['--sizes'], ['sizes'], 'u'), /--sizes needs a value/);
  const bad = parseBenchOptions(['--sizes', '10,x'], ['sizes'], 'u');
  assert.throws(() => listOption(bad, 'sizes', []), /--sizes 10,x: must be numbers above 0/);
});

test('a bench whose options are one table: the usage line lists them, and only they are accepted', () => {
  const help = { sizes: 'N1,N2 (10000)', env: 'KEY=VALUE (engine setting)', json: 'FILE' };
  const options = parseBenchCommandLine(['--sizes', '5,6', '--env', 'MNEMOS_A=1'], help);
  assert.equal(options.usage, 'options: --sizes N1,N2 (10000) --env KEY=VALUE (engine setting) --json FILE');
  assert.deepEqual(listOption(options, 'sizes', [1]), [5, 6]);
  assert.deepEqual(options.env, { MNEMOS_A: '1' });
  assert.throws(
    () => parseBenchCommandLine(['--seconds', '3'], help),
    /^Error: unknown option --seconds; options: --sizes N1,N2 \(10000\) --env/,
  );
});

test('the JSON records engine settings without their secrets', () => {
  assert.deepEqual(
    recordedSettings({
      MNEMOS_API_DATABASE_URL: 'postgres://postgres:hunter2@db.example:5432/mnemos',
      MNEMOS_API_KEY: 'abc',
      MNEMOS_API_RECALL_CACHE_MIB: '512',
      MNEMOS_API_RECALL_KEYWORD_LIMIT: '100',
    }),
    {
      MNEMOS_API_DATABASE_URL: 'postgres://postgres:***@db.example:5432/mnemos',
      MNEMOS_API_KEY: '***',
      MNEMOS_API_RECALL_CACHE_MIB: '512',
      MNEMOS_API_RECALL_KEYWORD_LIMIT: '100',
    },
  );
});
