// Whether the service's store can decide now, asked the cheapest way the store offers, and kept fresh by a timer.
import type { Store } from '../../stores/store.js';

/** A store with a health check of its own, as RedisStore has: one call of the kind a decision makes. */
interface HealthCheckable {
  health(): Promise<{ readonly ok: boolean }>;
}

function hasHealthCheck(store: Store): store is Store & HealthCheckable {
  return typeof (store as Partial<HealthCheckable>).health === 'function';
}

/**
 * True when `store` answers: its own health check where it has one (RedisStore's writes as a decision does, so a
 * Redis refusing writes is down), else no circuit breaker of its open, else up (MemoryStore cannot be down).
 */
async function storeAnswers(store: Store): Promise<boolean> {
  if (hasHealthCheck(store)) {
    try {
      return (await store.health()).ok;
    } catch {
      return false;
    }
  }
  return !(store.stats?.().breakers?.some((breaker) => breaker.open) ?? false);
}

export interface StoreHealth {
  /** The last answer: read per health request and per gRPC health check, so never a call to the store. */
  readonly up: boolean;
  stop(): void;
}

/**
 * Asks `storeAnswers` now and every `everyMs` after, one probe at a time. A health request then costs nothing, and
 * a load balancer polling many instances often cannot turn into load on Redis.
 */
export async function watchStoreHealth(store: Store, everyMs: number): Promise<StoreHealth> {
  let up = await storeAnswers(store);
  let probing = false;
  const timer = setInterval(() => {
    if (probing) return;
    probing = true;
    void storeAnswers(store).then((answer) => {
      up = answer;
      probing = false;
    });
  }, everyMs);
  timer.unref();
  return {
    get up() {
      return up;
    },
    stop: () => clearInterval(timer),
  };
}
