// The part of `ws` (which ships no types) the gateway tests use: a client that sends text and hears messages.
declare module 'ws' {
  import { EventEmitter } from 'node:events';

  export class WebSocket extends EventEmitter {
    constructor(url: string);
    send(data: string): void;
    close(): void;
  }
}
