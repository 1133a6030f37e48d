// Redis clients altered for tests: one that runs another script in place of the store's own engine (how tests plant
// a bug in a Lua twin), and one without FCALL.
import type { Cluster, Redis } from 'ioredis';

/** `client`, except that every script or function call runs `script` instead of the store's own engine. */
export function plantedClient<C extends Redis | Cluster>(client: C, script: string): C {
  return new Proxy(client, {
    get(target, property) {
      if (property === 'evalsha' || property === 'eval' || property === 'fcall')
        return (_script: string, ...keysAndArgs: unknown[]) =>
          Reflect.apply(target.eval, target, [script, ...keysAndArgs]);
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** `client` as a client library without FCALL would be: the store runs its engine as a script (EVALSHA). */
export function scriptsOnlyClient<C extends Redis | Cluster>(client: C): C {
  return new Proxy(client, {
    get(target, property) {
      if (property === 'fcall') return undefined;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
