// @mnemos/gateway: the managed multi-tenant front of Mnemos.
export { startGateway, VERSION, type RunningGateway, type StartOptions } from './app.js';
export { loadConfig, ConfigError, type GatewayConfig } from './config.js';
export { SCOPES, PLANS, type Scope } from './scopes.js';
export { main } from './main.js';
