// A Redis client that runs another script in place of the store's own: how tests plant a bug in a Lua twin.
import type { Cluster, Redis } from 'ioredis';

/** `client`, except that every script call runs `script` instead of the store's own. */
export function plantedClient<C extends Redis | Cluster>(client: C, script: string): C {
  return new Proxy(client, {
    get(target, property) {
      if (property === 'evalsha' || property === 'eval')
        return (_script: string, ...keysAndArgs: unknown[]) =>
          Reflect.apply(target.eval, target, [script, ...keysAndArgs]);
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
