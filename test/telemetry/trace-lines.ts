// The debug trace's lines as docs/architecture.md shows them, and as the trace tests compare them: what varies
// from run to run (a pid, a port, a time, the engine's hash, a slot, a request's number) made the same.
import { readFileSync } from 'node:fs';

/** A line without what varies from run to run. */
export function normalized(line: string): string {
  return line
    .replace(/^TOLLGATE \d+: /, '')
    .replace(/^#\d+ /, '#N ')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/\b\d+ ms\b/g, '<n> ms')
    .replace(/tollgate_[0-9a-f]{16}/g, 'tollgate_<hash>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/slot \d+/g, 'slot <n>');
}

/** Each flow's trace in docs/architecture.md: a `#### <flow>` heading, then a text block of the lines printed. */
export function documentedTraces(): Map<string, string[]> {
  const text = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
  const traces = new Map<string, string[]>();
  for (const [, name, block] of text.matchAll(/^#### (.+)\n\n```text\n([\s\S]*?)\n```/gm))
    traces.set(name as string, (block as string).split('\n'));
  return traces;
}
