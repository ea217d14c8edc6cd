// What every route of the gateway shares.
import type { ConsoleAuth } from './account/console-auth.js';
import type { Sessions } from './account/sessions.js';
import type { Authenticator } from './auth.js';
import type { GatewayConfig } from './config.js';
import type { QuotaLedger } from './quota.js';
import type { Engines } from './engine.js';
import type { RateLimits } from './ratelimit.js';
import type { Store } from './store.js';

export interface GatewayContext {
  config: GatewayConfig;
  store: Store;
  auth: Authenticator;
  /** The console's session cookie (account routes, and /v1/me routes with X-Mnemos-Project). */
  console: ConsoleAuth;
  sessions: Sessions;
  engines: Engines;
  limiter: RateLimits;
  quotas: QuotaLedger;
  /** Known once the gateway listens (the port may be chosen at start). */
  publicUrl: () => string;
  consoleUrl: () => string;
}
