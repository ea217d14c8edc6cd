// The import rules of the house plan (docs/architecture.md). `npm test` checks them, so the plan stays true.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Modules form layers; a cycle means two modules cannot be understood (or changed) one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { pathNot: '\\.d\\.ts$' } },
    },
    {
      name: 'domain-without-http',
      comment: 'Memory, recall, reflect and storage know nothing of HTTP; only the faces (CLI, process, start-up) mount it.',
      severity: 'error',
      from: {
        path: '^packages/engine/src/',
        pathNot: '^packages/engine/src/(http|cli|startup)/|^packages/engine/src/(process|index|cli)\\.ts$',
      },
      to: { path: '^packages/engine/src/http/' },
    },
    {
      name: 'packages-through-their-entry',
      comment: 'A package reaches another only through its published entry point, never its internals.',
      severity: 'error',
      from: { path: '^packages/([^/]+)/src/' },
      to: {
        path: '^packages/([^/]+)/src/',
        pathNot: ['^packages/$1/src/', '^packages/[^/]+/src/(index|[^/]+/index)\\.ts$'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/|/test/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.test.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['source', 'import', 'types', 'default'] },
  },
};
