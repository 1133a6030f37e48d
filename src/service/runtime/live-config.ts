// The configuration the service decides under now: loaded, reloaded one load at a time, swapped whole only when good.
import type { ServiceConfigOptions } from '../config/load.js';
import { readServiceConfig } from '../config/read-files.js';
import type { ServiceConfig } from '../config/types.js';
import type { ServiceLogger } from './service-options.js';

/** Why the service is unhealthy while its configuration has no domain. */
export const NO_DOMAIN = 'no rate limit configuration is loaded (0 domains)';

export class LiveConfig {
  #current: ServiceConfig | undefined;
  /** The last load asked for: each waits for the one before, so the last to finish read the newest files. */
  #loading: Promise<void> = Promise.resolve();
  readonly #paths: readonly string[];
  readonly #options: ServiceConfigOptions;
  readonly #counted: (ok: boolean) => void;
  readonly #logger: ServiceLogger;

  /** `counted` is told of every load after the first, good or bad (the metrics' configLoad). */
  constructor(
    paths: readonly string[],
    options: ServiceConfigOptions,
    counted: (ok: boolean) => void,
    logger: ServiceLogger,
  ) {
    this.#paths = paths;
    this.#options = options;
    this.#counted = counted;
    this.#logger = logger;
  }

  /** The configuration now. Read once per request, as it arrives: a reload meanwhile leaves the request on its own. */
  get current(): ServiceConfig {
    if (this.#current === undefined) throw new Error('the configuration is read before it was loaded');
    return this.#current;
  }

  /** The first load: rejects with the error naming file, line and key. No domain is no error, but a warning. */
  async load(): Promise<ServiceConfig> {
    await this.#queue(async () => {
      this.#current = await readServiceConfig(this.#paths, this.#options);
      this.#warnIfEmpty(this.#current);
    });
    return this.current;
  }

  /** Loads again; when the files are bad, rejects and the last good configuration stays. */
  reload(): Promise<void> {
    return this.#queue(async () => {
      let next: ServiceConfig;
      try {
        next = await readServiceConfig(this.#paths, this.#options);
      } catch (error) {
        this.#counted(false);
        throw error;
      }
      this.#current = next;
      this.#counted(true);
      this.#logger.info?.(`configuration reloaded: ${describeConfig(next)}`);
      this.#warnIfEmpty(next);
    });
  }

  /** No domain is almost always a wrong or empty mount: the service runs, unhealthy, and says why. */
  #warnIfEmpty(config: ServiceConfig): void {
    if (config.domains.length === 0)
      this.#logger.warn(
        `${NO_DOMAIN}: no file in ${this.#paths.join(', ')} declares a domain; health checks fail`,
      );
  }

  /** `reload()` for the watcher: a bad file is logged with why (file, line, key), never thrown. */
  async reloadLogged(): Promise<void> {
    try {
      await this.reload();
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.#logger.error(`configuration not reloaded, the last good one still applies: ${why}`);
    }
  }

  #queue(load: () => Promise<void>): Promise<void> {
    const next = this.#loading.then(load);
    // The chain goes on past a failed load; the caller sees the failure through `next`.
    this.#loading = next.catch(() => undefined);
    return next;
  }
}

/** `2 domains from 3 files`: what a log line says of a configuration. */
function describeConfig(config: ServiceConfig): string {
  const domains = config.domains.length === 1 ? 'domain' : 'domains';
  const files = config.files.length === 1 ? 'file' : 'files';
  return `${config.domains.length} ${domains} from ${config.files.length} ${files}`;
}
