import initial from './001_initial.js';
import jobs from './002_jobs.js';
import vectorSync from './003_vector_sync.js';
import noContentStatistics from './004_no_content_statistics.js';
import changeLog from './005_change_log.js';
import tenantKeys from './006_tenant_keys.js';
import bankStatistics from './008_bank_statistics.js';
import connectedEngines from './009_connected_engines.js';
import memoryHistory from './010_memory_history.js';
import expiry from './011_expiry.js';
import memoryEntities from './012_memory_entities.js';
import statisticsDeltas from './013_statistics_deltas.js';
import openBankNumbers from './014_open_bank_numbers.js';
import closeByIndex from './015_close_by_index.js';
import vectorsInRows from './016_vectors_in_rows.js';
import bankStatisticsFunction from './017_bank_statistics_function.js';
import memoriesByBank from './018_memories_by_bank.js';
import bankPartitions from './019_bank_partitions.js';

/** Numbered migrations, applied in order, each once. Append only: never edit a migration that has shipped. */
export const migrations: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  { version: 1, name: 'initial', sql: initial },
  { version: 2, name: 'jobs', sql: jobs },
  { version: 3, name: 'vector_sync', sql: vectorSync },
  { version: 4, name: 'no_content_statistics', sql: noContentStatistics },
  { version: 5, name: 'change_log', sql: changeLog },
  { version: 6, name: 'tenant_keys', sql: tenantKeys },
  // 7 is not here: the recall indexes it names are built at run time (007_recall_index.ts).
  { version: 8, name: 'bank_statistics', sql: bankStatistics },
  { version: 9, name: 'connected_engines', sql: connectedEngines },
  { version: 10, name: 'memory_history', sql: memoryHistory },
  { version: 11, name: 'expiry', sql: expiry },
  { version: 12, name: 'memory_entities', sql: memoryEntities },
  { version: 13, name: 'statistics_deltas', sql: statisticsDeltas },
  { version: 14, name: 'open_bank_numbers', sql: openBankNumbers },
  { version: 15, name: 'close_by_index', sql: closeByIndex },
  { version: 16, name: 'vectors_in_rows', sql: vectorsInRows },
  { version: 17, name: 'bank_statistics_function', sql: bankStatisticsFunction },
  { version: 18, name: 'memories_by_bank', sql: memoriesByBank },
  { version: 19, name: 'bank_partitions', sql: bankPartitions },
];
