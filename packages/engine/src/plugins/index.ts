import { asyncRetainPlugin } from './async-retain.js';
import { factExtractionPlugin } from './fact-extraction.js';
import { reflectPlugin } from './reflect.js';
import type { EnginePlugin } from './types.js';

export type { EnginePlugin, InstalledPlugin, PluginHooks, PluginParts } from './types.js';

/**
 * The engine's optional features, in install order. The order is the order of their retain hooks: an async retain's
 * job completes in the retain's transaction before fact extraction is enqueued in it.
 */
export const ENGINE_PLUGINS: readonly EnginePlugin[] = [asyncRetainPlugin, factExtractionPlugin, reflectPlugin];
