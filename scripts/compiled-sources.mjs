// Loaded by run-tests.mjs into each test file's process (after tsx) when every TypeScript project's build is current:
// a module of a project's sources (packages/<p>/src/<x>.ts) then loads as its compiled file (packages/<p>/dist/<x>.js).
// The test files and their helpers still run through tsx; what they import from the packages runs compiled, as the
// child processes the tests start already do (test/helpers/process.ts). Both are the same code (the build is current),
// but from source every test process and each engine's worker threads (the model's, the database's) load tsx and
// transform the sources again, about a second of CPU for each, which the suite paid in every file and for every engine
// it started. A source changed since the last build makes the whole run use the sources, as before.
import { register } from 'node:module';

register('./compiled-sources-hooks.mjs', import.meta.url);
