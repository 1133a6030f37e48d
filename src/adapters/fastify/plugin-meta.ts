// What fastify-plugin sets on a plugin, without making it a runtime dependency: no encapsulation, and its name.

/** Fastify's own reading of a plugin's name and the Fastify versions it runs on (plugins depend on it by name). */
export interface PluginMeta {
  readonly name: string;
  readonly fastify: string;
}

/** `plugin` marked to skip encapsulation (its hooks and decorators reach the whole app), named `displayName`. */
export function unencapsulated<T extends object>(plugin: T, displayName: string, meta?: PluginMeta): T {
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: displayName,
    ...(meta === undefined ? {} : { [Symbol.for('plugin-meta')]: meta }),
  });
}
