// What the demo servers share: their environment settings, a clear refusal of bad ones, serving and draining.
import { EnvError, envFlag, envPort } from '../src/cli/store-from-env.js';
import { TollgateError } from '../src/core/errors.js';
import { createDemoApp, DEFAULT_API_KEYS, type DemoOptions, defaultPaidApiKeys } from './demo-app.js';
import { createDemoLogger } from './demo-logger.js';
import { serve } from './serve.js';

/** Says why the demo cannot start and exits 1: a stack trace would bury a configuration mistake. */
export function refuseToStart(reason: string): never {
  process.stderr.write(`tollgate demo: ${reason}\n`);
  process.exit(1);
}

/** What `read` returns, or, for an environment variable it cannot use, a refusal to start saying which and why. */
function orRefuse<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof EnvError) refuseToStart(error.message);
    throw error;
  }
}

/** A comma-separated list; unset gives the default, and so does empty unless `emptyIsNone`. */
function envList(name: string, fallback: readonly string[], emptyIsNone = false): readonly string[] {
  const raw = process.env[name];
  if (raw === undefined || (raw === '' && !emptyIsNone)) return fallback;
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** Which environment variable sets each option a demo can refuse. */
const ENV_OF_OPTION: Readonly<Record<string, string>> = { token: 'ADMIN_TOKEN', keys: 'API_KEYS' };

/**
 * Serves the demo app as SERVER_ID (default 'primary') on PORT (default 3000), with ADMIN_TOKEN, API_KEYS,
 * PAID_API_KEYS and LOG_CLIENT_IPS; the drain closes the store.
 */
export async function runDemo(options: Pick<DemoOptions, 'store' | 'health' | 'logger'>): Promise<void> {
  const { store, logger = createDemoLogger() } = options;
  const apiKeys = envList('API_KEYS', DEFAULT_API_KEYS);
  // Empty means no paid key. Unset, the default paid key only where it is an API key: a custom API_KEYS alone
  // must start, and the default paid key is not in it.
  const paidApiKeys = envList('PAID_API_KEYS', defaultPaidApiKeys(apiKeys), true);
  const unknownPaid = paidApiKeys.filter((key) => !apiKeys.includes(key));
  if (unknownPaid.length > 0)
    refuseToStart(`PAID_API_KEYS must be a subset of API_KEYS (${unknownPaid.length} of them are not)`);
  let app: ReturnType<typeof createDemoApp>;
  try {
    app = createDemoApp({
      ...options,
      logger,
      serverId: process.env.SERVER_ID || 'primary',
      ...(process.env.ADMIN_TOKEN ? { adminToken: process.env.ADMIN_TOKEN } : {}),
      apiKeys,
      paidApiKeys,
      logClientIps: orRefuse(() => envFlag(process.env, 'LOG_CLIENT_IPS', false)),
    });
  } catch (error) {
    if (!(error instanceof TollgateError) || error.code !== 'ERR_TOLLGATE_CONFIG') throw error;
    const variable = ENV_OF_OPTION[error.option ?? ''];
    refuseToStart(variable === undefined ? error.message : `${variable} is not usable: ${error.message}`);
  }
  const port = orRefuse(() => envPort(process.env, 'PORT', 3000));
  try {
    await serve(app, { port, onClose: () => store.close?.(), log: (message) => logger.info(message) });
  } catch (error) {
    // The likeliest first stumble (another server already on 3000) gets a line saying what to do, not a stack trace.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      refuseToStart(`port ${port} is in use: set PORT to a free one (PORT=3001, say)`);
    if (code === 'EACCES') refuseToStart(`port ${port} needs privileges: set PORT to one above 1023`);
    throw error;
  }
}
