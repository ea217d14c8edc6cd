// The import rules of the house plan (docs/architecture.md). `npm test` checks them, so the plan stays true.

// The storage modules of the engine and of the gateway: the only ones that hold SQL (docs/architecture.md, "Storage
// modules" and "The gateway's modules"; the ESLint config lists the same files for its rule against SQL text elsewhere).
const STORAGE =
  '^packages/engine/src/(db|vectors/storage|crypto|keywords)/' +
  '|^packages/engine/src/vectors/vector-cache\\.ts$' +
  '|^packages/engine/src/memory/(store|bank-store|fact-store|history-store|transfer-store|entity-store|supersede|validity-sql|sql|rows|reembed|vector-literal)\\.ts$' +
  '|^packages/engine/src/filters/sql\\.ts$' +
  '|^packages/engine/src/jobs/(queue|operations)\\.ts$' +
  '|^packages/gateway/src/(db|store)\\.ts$' +
  '|^packages/gateway/src/.*-store\\.ts$';
// The composition roots open the database and hand it to the storage modules.
const OPENS_THE_DATABASE = '^packages/engine/src/(engine|cli/reembed)\\.ts$|^packages/gateway/src/app\\.ts$';
// The database handles: outside storage and the composition roots, a module names them only as types.
const DATABASE_HANDLE = '^packages/engine/src/db/database\\.ts$|^packages/gateway/src/db\\.ts$';

// The engine's layers, bottom to top (docs/architecture.md, "The engine's layers"). A module imports from its own
// layer or the ones below, never from a layer above: the lower layers can be read, tested and changed without the upper.
const ENGINE = '^packages/engine/src/';
const LAYERS = [
  ['foundation', ['(util|config)/', '(log|metrics|version|home)\\.ts$']],
  ['drivers', ['(db|embeddings)/']],
  ['storage', ['(crypto|keywords|memory|filters)/', 'vectors/storage/']],
  ['kernels', ['vectors/kernels/']],
  ['bank-index', ['vectors/vector-cache\\.ts$']],
  ['features', ['(recall|llm|jobs)/']],
  ['service', ['service/']],
  ['plugins', ['(reflect|plugins)/']],
  ['wire', ['wire/']],
  ['root', ['startup/', 'engine\\.ts$']],
  ['faces', ['(http|mcp|cli)/', '(index|cli|process)\\.ts$']],
];
const layerPaths = (layers) => layers.flatMap(([, paths]) => paths.map((p) => ENGINE + p));
const LAYER_RULES = LAYERS.slice(0, -1).map(([name, paths], i) => ({
  name: `layer-${name}-imports-down`,
  comment:
    `The ${name} layer imports from itself and the layers below it (${
      LAYERS.slice(0, i)
        .map(([n]) => n)
        .join(', ') || 'none'
    }), ` +
    `never from ${LAYERS.slice(i + 1)
      .map(([n]) => n)
      .join(', ')}.`,
  severity: 'error',
  from: { path: paths.map((p) => ENGINE + p) },
  to: { path: layerPaths(LAYERS.slice(i + 1)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...LAYER_RULES,
    {
      name: 'engine-module-in-a-layer',
      comment: 'Every engine module sits in one of LAYERS, so the layer rules see its imports: add a new folder there.',
      severity: 'error',
      from: { path: ENGINE, pathNot: [...layerPaths(LAYERS), '\\.d\\.ts$'] },
      to: { path: ENGINE },
    },
    {
      name: 'sql-only-in-storage',
      comment:
        'SQL helpers, database drivers and the database modules are for the storage modules; the rest of the engine ' +
        'and of the gateway calls storage functions (a module may still name the handle as a type, to pass it on or ' +
        'open a transaction).',
      severity: 'error',
      from: { path: '^packages/(engine|gateway)/src/', pathNot: [STORAGE, OPENS_THE_DATABASE] },
      to: {
        path: [
          '(^|/)node_modules/(sql-template-tag|pg|pgvector|@electric-sql/pglite[^/]*)/',
          '^packages/engine/src/memory/sql\\.ts$',
          '^packages/engine/src/db/',
        ],
        pathNot: '^packages/engine/src/db/(database|availability)\\.ts$',
      },
    },
    {
      name: 'database-handle-as-a-type',
      comment: 'Outside the storage modules the database handle is only a type: its values (helpers) stay in storage.',
      severity: 'error',
      from: { path: '^packages/(engine|gateway)/src/', pathNot: [STORAGE, OPENS_THE_DATABASE] },
      to: { path: DATABASE_HANDLE, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-cycles',
      comment: 'Modules form layers; a cycle means two modules cannot be understood (or changed) one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { pathNot: '\\.d\\.ts$' } },
    },
    {
      name: 'domain-without-http',
      comment:
        'Memory, recall, reflect and storage know nothing of HTTP; only the faces (CLI, process, start-up) mount it.',
      severity: 'error',
      from: {
        path: '^packages/engine/src/',
        pathNot: '^packages/engine/src/(http|cli|startup)/|^packages/engine/src/(process|index|cli)\\.ts$',
      },
      to: { path: '^packages/engine/src/http/' },
    },
    {
      name: 'gateway-takes-only-the-engine-wire',
      comment:
        'The gateway fronts engines over HTTP. From the engine it takes only the request schemas it checks forwarded ' +
        'calls with (@mnemos/engine/wire), so both accept the same requests; never engine code.',
      severity: 'error',
      from: { path: '^packages/gateway/src/' },
      to: { path: '^packages/engine/src/', pathNot: '^packages/engine/src/wire/index\\.ts$' },
    },
    {
      name: 'engine-without-gateway',
      comment: 'The dependency runs one way, gateway to engine; the engine loads the gateway only by name at run time.',
      severity: 'error',
      from: { path: '^packages/engine/src/' },
      to: { path: '^packages/gateway/src/' },
    },
    {
      name: 'engine-wire-entry-is-schemas-only',
      comment: 'What @mnemos/engine/wire loads is the schemas alone, so a server importing it runs no engine code.',
      severity: 'error',
      from: { path: '^packages/engine/src/wire/(index|schemas|entity-schemas)\\.ts$' },
      to: { path: '^packages/engine/src/', pathNot: '^packages/engine/src/wire/(entity-)?schemas\\.ts$' },
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
    exclude: { path: '^packages/[^/]+/dist/|/test/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.test.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['source', 'import', 'types', 'default'] },
  },
};
