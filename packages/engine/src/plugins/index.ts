import { asyncRetainPlugin } from './async-retain.js';
import { factExtractionPlugin } from './fact-extraction.js';
import { reflectPlugin } from './reflect.js';
import type { EnginePlugin } from './types.js';

export type { EnginePlugin, InstalledPlugin, PluginParts } from './types.js';

/**
 * The engine's optional features, in install order, which is the order of their retain hooks. An async retain's job
 * completes in its retain's transaction before the chain runs, so before fact extraction is enqueued in it.
 */
export const ENGINE_PLUGINS: readonly EnginePlugin[] = [asyncRetainPlugin, factExtractionPlugin, reflectPlugin];
