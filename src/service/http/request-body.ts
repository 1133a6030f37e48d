// A request's body read whole, up to a bound: the service's bodies are small JSON, and a client must not make it hold more.
import type { IncomingMessage } from 'node:http';

/** The largest body the service reads: 64 KiB. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The body as UTF-8 text, or undefined when it is longer than 64 KiB (told by Content-Length before reading, or
 * while reading): the rest is then left unread, and the caller answers 413 and closes the connection.
 */
export function readBody(req: IncomingMessage): Promise<string | undefined> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
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
      resolve(undefined);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
    // Closed before its end: the client went away (a no-op once the body was read).
    req.once('close', () => reject(new Error('the client closed the request before its body ended')));
  });
}
