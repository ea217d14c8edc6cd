// Lint rules for every TypeScript file: typescript-eslint's strict, type-aware set. The type checker (tsc) covers what
// it can prove; these rules catch what it allows (floating promises, unsafe any flows, needless conditions).
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The storage modules of the engine and of the gateway: the only ones that hold SQL (see docs/architecture.md and
// .dependency-cruiser.cjs).
const STORAGE_MODULES = [
  'packages/engine/src/db/**',
  'packages/engine/src/memory/{store,bank-store,fact-store,history-store,transfer-store,entity-store,supersede,validity-sql,sql,rows,reembed,vector-literal}.ts',
  'packages/engine/src/filters/sql.ts',
  'packages/engine/src/jobs/{queue,operations}.ts',
  'packages/engine/src/vectors/storage/**',
  'packages/engine/src/vectors/vector-cache.ts',
  'packages/engine/src/crypto/**',
  'packages/engine/src/keywords/**',
  'packages/gateway/src/{db,store}.ts',
  'packages/gateway/src/**/*-store.ts',
];

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/test-output/**',
      '**/*.d.mts',
      'packages/client/src/generated/**',
      'clients/**',
    ],
  },
  eslint.configs.recommended,
  {
    // The scripts and launchers are plain JavaScript run by Node: the recommended rules, with Node's globals.
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { sourceType: 'module', globals: globals.node },
    rules: { 'no-unused-vars': ['error', { ignoreRestSiblings: true, varsIgnorePattern: '^_', caughtErrors: 'none' }] },
  },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.mts'],
    extends: [tseslint.configs.strictTypeChecked],
  },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.mts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Numbers and booleans read naturally in messages; objects and nullish values stay refused.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // node:test's describe/it return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      // With noUncheckedIndexedAccess every indexed read is `T | undefined`; inside loops bounded by the array's length
      // (the vector and matrix kernels) `!` states what the bound proves without a runtime check per element.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // A variable assigned once but read earlier by a closure (a callback wired before the value exists) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Fastify hooks and handlers are async to use its promise form (no done callback); an async function without an
      // await is the plain form of that.
      '@typescript-eslint/require-await': 'off',
      // `const { dropped: _dropped, ...kept } = value` is how a field is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, varsIgnorePattern: '^_' }],
      // Arrow shorthand that returns a void call (`() => void x()`, `(r) => resolve(r)`) is idiomatic here.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  {
    files: ['packages/*/test/**/*.ts'],
    rules: {
      // Teardown hooks also run after a failed set-up, when a variable typed as set is still undefined, so tests guard
      // with `?.` where the types say it cannot be needed.
      '@typescript-eslint/no-unnecessary-condition': 'off',
    },
  },
  {
    // SQL text lives in the storage modules (docs/architecture.md, "Storage modules" and "The gateway's modules"); the
    // rest of the engine and of the gateway calls their functions. dependency-cruiser keeps the SQL helpers and drivers
    // to the same modules.
    files: ['packages/engine/src/**/*.ts', 'packages/gateway/src/**/*.ts'],
    ignores: STORAGE_MODULES,
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'CallExpression[callee.property.name=/^(query|exec)$/][arguments.0.type=/^(Literal|TemplateLiteral)$/]',
          message: 'SQL belongs in a storage module (docs/architecture.md, "Storage modules"): call a function there.',
        },
      ],
    },
  },
  {
    files: ['**/*.d.ts'],
    rules: {
      // Declarations describe classes that exist at run time (WebAssembly objects), with constructors only.
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
);
