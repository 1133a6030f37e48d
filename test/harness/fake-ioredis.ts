// An ioredis-shaped client for tests that script its calls: always ready, with nothing to connect or close.
export function connectedIoredis<Calls extends object>(calls: Calls) {
  const client = {
    status: 'ready',
    del: () => Promise.resolve(1),
    connect: () => Promise.resolve(),
    quit: () => Promise.resolve('OK'),
    disconnect: () => {},
    once: () => client,
    off: () => client,
    ...calls,
  };
  return client;
}
