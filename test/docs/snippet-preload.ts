// Loaded before each README snippet: servers listen on a free loopback port and say which, and fetch stays on this machine.
import { writeSync } from 'node:fs';
import { Server } from 'node:net';

/** The test reads the port of each server that listens from this descriptor, apart from the snippet's own output. */
const PORTS_FD = 3;

// A snippet says `app.listen(3000)` as a reader would; run here, any port could be taken, so each gets a free one.
const listen = Server.prototype.listen as (this: Server, ...args: unknown[]) => Server;
Server.prototype.listen = function listenOnFreePort(this: Server, ...args: unknown[]): Server {
  const [first] = args;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port, [host], [backlog], [callback]): the callback is the one function among the rest.
    const callback = args.find((arg) => typeof arg === 'function');
    args = callback === undefined ? [0, '127.0.0.1'] : [0, '127.0.0.1', callback];
  } else if (typeof first === 'object' && first !== null && 'port' in first) {
    args = [{ ...first, port: 0, host: '127.0.0.1' }, ...args.slice(1)];
  }
  this.once('listening', () => {
    const address = this.address();
    if (typeof address === 'object' && address !== null) writeSync(PORTS_FD, `${address.port}\n`);
  });
  return listen.apply(this, args);
};

// A snippet may call someone else's API; a run must not, so anything off this machine answers an empty JSON 200.
const loopback = new Set(['127.0.0.1', 'localhost', '[::1]']);
const fetchOnline = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : input);
  if (loopback.has(url.hostname)) return fetchOnline(input, init);
  return Promise.resolve(Response.json({}));
};
