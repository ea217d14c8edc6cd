// Both servers' OpenAPI documents pass Redocly's recommended rules without an error, and a client generated from
// each with openapi-typescript has a type for every operation: its request, its success answer (JSON, or the event
// stream reflect offers) and its errors as application/problem+json. The generated types are type-checked with the
// TypeScript compiler, so nothing runs against the servers but the two document fetches.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { call, startHarness, startTestEngine, type EngineHandle, type Harness } from './helpers.js';

interface Operation {
  operationId?: string;
  requestBody?: unknown;
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, unknown> };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

/** What a generated client must know of every operation, written as types that fail to compile when it does not. */
const CHECKS = `
type Success = 200 | 201 | 202 | 204;
type Json<R> = R extends { content: infer C } ? C[keyof C] : never;
type Known<T> = [T] extends [never] ? false : unknown extends T ? false : true;
type AllTrue<U> = false extends U ? false : true;
type Answer<O> = O extends { responses: infer R }
  ? { [S in keyof R & Success]: S extends 204 ? 'empty' : Json<R[S]> }[keyof R & Success]
  : never;
type ErrorsAreProblems<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends Success ? true : R[S] extends { content: { 'application/problem+json': object } } ? true : false }[keyof R]
  : false;
type Request<O> = (O extends { parameters: infer P } ? P : never) &
  (O extends { requestBody?: infer B } ? ([B] extends [undefined] ? unknown : { body: Json<NonNullable<B>> }) : unknown);
declare function call<O>(input: Request<O>): Promise<Answer<O>>;
`;

/** A module that calls every operation of the document through the generated types, and checks each one's types. */
function callsOfEveryOperation(doc: Document, module: string): string {
  const lines = [`import type { operations, paths } from './${module}';`, CHECKS];
  for (const [route, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!METHODS.has(method) || op.operationId === undefined) continue;
      const type = `operations['${op.operationId}']`;
      lines.push(
        `export async function ${op.operationId}(input: Request<${type}>) {`,
        `  const answer = await call<${type}>(input);`,
        `  const atPath: paths['${route}']['${method}'] extends ${type} ? true : false = true;`,
        `  const answered: Known<typeof answer> = true;`,
        `  const problems: AllTrue<ErrorsAreProblems<${type}>> = true;`,
        op.requestBody === undefined ? '' : `  const body: Known<Request<${type}>['body']> = true;`,
        `  return [answer, atPath, answered, problems] as const;`,
        `}`,
      );
    }
  }
  return lines.join('\n');
}

const operationsOf = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([route, methods]) =>
    Object.entries(methods)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({ where: `${method.toUpperCase()} ${route}`, op })),
  );

describe('OpenAPI documents of the engine and the gateway', () => {
  let engine: EngineHandle;
  let gateway: Harness;
  const docs: Record<'engine' | 'gateway', Document> = {} as Record<'engine' | 'gateway', Document>;

  before(async () => {
    // The single-tenant engine, the one without a token, is the engine most people run; the gateway's document needs
    // no engine behind it.
    [engine, gateway] = await Promise.all([startTestEngine({ open: true }), startHarness('http://127.0.0.1:9')]);
    docs.engine = (await call(engine.url, 'GET', '/openapi.json')).body as Document;
    docs.gateway = (await call(gateway.url, 'GET', '/openapi.json')).body as Document;
  });
  after(async () => {
    await Promise.all([engine?.close(), gateway?.close()]);
  });

  it("passes Redocly's recommended rules with no error", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    for (const [name, doc] of Object.entries(docs)) {
      const found = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `${name}.json`, config });
      const errors = found
        .filter((p) => p.severity === 'error')
        .map((p) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
      assert.deepEqual(errors, [], `${name}'s document`);
    }
  });

  it('names every operation and declares the bearer token and the description version', () => {
    for (const [name, doc] of Object.entries(docs)) {
      for (const { where, op } of operationsOf(doc)) assert.ok(op.operationId, `${name}: ${where} has no operationId`);
      assert.equal(doc.info.version, '1.0.0', `${name}'s info.version`);
    }
    const bearer = docs.engine.components?.securitySchemes?.['bearer'] as
      { type?: string; scheme?: string } | undefined;
    assert.deepEqual([bearer?.type, bearer?.scheme], ['http', 'bearer'], "the engine's bearer token scheme");
  });

  it('generates with openapi-typescript a client that types a call of every operation', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mnemos-openapi-client-'));
    try {
      const files: string[] = [];
      for (const [name, doc] of Object.entries(docs)) {
        await writeFile(path.join(dir, `${name}.ts`), astToString(await openapiTS(JSON.stringify(doc))));
        const calls = path.join(dir, `${name}-calls.ts`);
        await writeFile(calls, callsOfEveryOperation(doc, name));
        files.push(calls);
      }
      const program = ts.createProgram(files, {
        strict: true,
        noEmit: true,
        noUnusedLocals: false,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts'],
        types: [],
        skipLibCheck: true,
      });
      const diagnostics = ts.getPreEmitDiagnostics(program);
      const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' };
      assert.equal(diagnostics.length, 0, ts.formatDiagnostics(diagnostics.slice(0, 20), host));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
