// A request's body read whole, up to a bound: the service's bodies are small JSON, and a client must not make it hold more.
import type { IncomingMessage } from 'node:http';
import { type Outcome, textAnswer } from './answer.js';

/** The largest body the service reads: 64 KiB. */
const MAX_BODY_BYTES = 64 * 1024;

/** A body over the bound: the rest of it is never read, so the connection cannot serve another request. */
const TOO_LARGE: Outcome = {
  answer: textAnswer(413, 'the body is larger than 64 KiB', [['connection', 'close']]),
  result: 'invalid',
};

/**
 * A client gone before its body ended (it closed the connection, or the server's request timeout cut a stalled
 * body): the client's doing, counted as invalid and not logged. No one reads the answer.
 */
const CLIENT_GONE: Outcome = {
  answer: textAnswer(400, 'the client closed the request before its body ended'),
  result: 'invalid',
};

/**
 * The body as UTF-8 text; else the outcome that ends the request: TOO_LARGE past 64 KiB (told by Content-Length
 * before reading, or while reading: the rest is then left unread, and the answer closes the connection), or
 * CLIENT_GONE.
 */
export function readBody(req: IncomingMessage): Promise<string | Outcome> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.pause();
      resolve(TOO_LARGE);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    // An error or a close before the end: the client went away (a no-op once the body was read).
    req.once('error', () => resolve(CLIENT_GONE));
    req.once('close', () => resolve(CLIENT_GONE));
  });
}
