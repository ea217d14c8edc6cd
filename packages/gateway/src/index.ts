// @mnemos/gateway: the managed multi-tenant front of Mnemos.
export { startGateway, VERSION, type RunningGateway, type StartOptions } from './app.js';
export { loadConfig, ConfigError, type GatewayConfig } from './config.js';
export { PLANS } from './plans.js';
export { SCOPES, type Scope } from './scopes.js';
export { main } from './main.js';
