// The gateway's OpenAPI document names, for each operation, every problem code it can answer (`x-problem-codes`),
// and every code it names is one of the catalogue's.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CATALOGUE, type ProblemCode } from '@mnemos/problems';
import { call, startHarness, type Harness } from './helpers.js';

interface Operation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  responses?: Record<string, { description?: string }>;
  'x-problem-codes'?: string[];
}

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

/** Codes answered only by paths the document leaves out (OAuth endpoints, the console files, /health, no route). */
const OUTSIDE_OPERATIONS = new Set(['starting', 'console_not_built']);

/** Every code the gateway's own source builds a problem with. */
async function codesInSource(dir: string): Promise<Set<string>> {
  const codes = new Set<string>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const text = await readFile(path.join(entry.parentPath, entry.name), 'utf8');
    for (const m of text.matchAll(/\bproblem\(\s*'([a-z_]+)'/g)) codes.add(m[1] ?? '');
  }
  return codes;
}

describe('problem codes in the OpenAPI document', () => {
  let h: Harness;
  const operations: Array<{ where: string; op: Operation }> = [];

  before(async () => {
    // The document needs no engine: forwarding is never tried.
    h = await startHarness('http://127.0.0.1:9');
    const doc = (await call(h.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, Operation>>;
    };
    for (const [p, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods))
        operations.push({ where: `${method.toUpperCase()} ${p}`, op });
    }
  });
  after(async () => {
    await h.close();
  });

  const codesOf = (op: Operation): string[] => op['x-problem-codes'] ?? [];
  const byId = (id: string): Operation => {
    const found = operations.find((o) => o.op.operationId === id);
    assert.ok(found, `no operation ${id}`);
    return found.op;
  };
  const assertLists = (op: Operation, codes: readonly ProblemCode[], where: string): void => {
    for (const code of codes) assert.ok(codesOf(op).includes(code), `${where} does not list ${code}`);
  };

  it('lists codes for every operation, each in the catalogue and under a response of its status', () => {
    assert.ok(operations.length > 30, `only ${operations.length} operations`);
    for (const { where, op } of operations) {
      const codes = codesOf(op);
      assert.ok(codes.length > 0, `${where} lists no problem codes`);
      for (const code of codes) {
        assert.ok(code in CATALOGUE, `${where} lists ${code}, which is not in the catalogue`);
        const status = CATALOGUE[code as ProblemCode].status;
        assert.match(op.responses?.[String(status)]?.description ?? '', new RegExp(`\\b${code}\\b`), where);
      }
    }
  });

  it("lists the input layer's codes on every operation, malformed JSON included", () => {
    for (const { where, op } of operations) {
      assertLists(op, ['validation_failed', 'malformed_json', 'json_too_deep', 'unsupported_media_type'], where);
    }
  });

  it('lists the credential codes on every route a key, token or console session opens', () => {
    const protectedOps = operations.filter(({ op }) => op.security?.some((s) => 'apiKey' in s) === true);
    assert.ok(protectedOps.length > 20);
    for (const { where, op } of protectedOps) {
      assertLists(
        op,
        ['unauthorized', 'insufficient_scope', 'forbidden', 'rate_limited', 'project_required', 'csrf_failed'],
        where,
      );
    }
  });

  it('lists the quota codes on retain, recall and reflect, and the LLM codes on reflect', () => {
    const counted = ['retain', 'recall', 'reflect', 'retainToBank', 'recallFromBank', 'reflectOnBank'];
    for (const id of [...counted, 'retainToSpace', 'recallFromSpace']) {
      assertLists(byId(id), ['quota_exceeded', 'database_unavailable', 'engine_unavailable', 'engine_timeout'], id);
    }
    for (const id of ['reflect', 'reflectOnBank']) assertLists(byId(id), ['llm_not_configured', 'llm_timeout'], id);
    assert.ok(!codesOf(byId('listBanks')).includes('quota_exceeded'), 'listing banks uses no quota');
  });

  it('lists the account, console and admin codes on their routes', () => {
    assertLists(byId('signUp'), ['weak_password', 'signup_closed', 'account_exists', 'rate_limited'], 'signUp');
    assertLists(byId('signIn'), ['invalid_credentials', 'signin_throttled'], 'signIn');
    for (const id of ['getSession', 'signOut', 'listAccountProjects', 'createAccountProject', 'renameAccountProject']) {
      assertLists(byId(id), ['unauthorized', 'csrf_failed'], id);
    }
    assertLists(byId('decideOAuthInteraction'), ['unauthorized', 'csrf_failed', 'interaction_not_found'], 'consent');
    assertLists(byId('getOAuthInteraction'), ['interaction_not_found'], 'getOAuthInteraction');
    const admin = operations.filter(({ op }) => op.security?.some((s) => 'adminToken' in s) === true);
    assert.ok(admin.length > 10);
    for (const { where, op } of admin) assertLists(op, ['unauthorized', 'rate_limited'], where);
    assertLists(byId('adminCreateAccount'), ['weak_password', 'account_exists'], 'adminCreateAccount');
  });

  it('lists every code the gateway builds on at least one operation', async () => {
    const listed = new Set(operations.flatMap(({ op }) => codesOf(op)));
    const built = await codesInSource(SRC);
    assert.ok(built.size > 20, `only ${built.size} codes found in the source`);
    for (const code of built) {
      if (OUTSIDE_OPERATIONS.has(code)) continue;
      assert.ok(listed.has(code), `the gateway answers ${code}, but no operation lists it`);
    }
  });
});
