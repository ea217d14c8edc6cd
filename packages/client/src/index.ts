// @mnemos/client: the TypeScript client of Mnemos. fetch-based, no runtime dependencies.
export {
  Mnemos,
  type MnemosOptions,
  type RequestOptions,
  type RetainOptions,
  type RetainBatchOptions,
  type RecallOptions,
  type ReflectOptions,
  type ListBanksOptions,
  type ListMemoriesOptions,
  type ListEntitiesOptions,
  type GetEntityOptions,
  type ClearMemoriesOptions,
  type DeleteMatchingOptions,
  type BulkOptions,
  type ExportOptions,
  type ImportOptions,
  type RetainMessagesOptions,
} from './client.js';
export { MnemosError, parseRetryAfter, type FieldError } from './errors.js';
export type * from './types.js';
export type { paths, components, operations } from './generated/types.js';
