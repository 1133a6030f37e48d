// Finished spans as the trace tests read them: each span's name, its parent's name, its attributes and status.
import assert from 'node:assert/strict';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface SpanView {
  readonly name: string;
  readonly parent: string | undefined;
  /** Without their `tollgate.` prefix. */
  readonly attributes: Record<string, unknown>;
  readonly status: 'ok' | 'error';
}

/** The spans of one trace, each after its parent (they finish the other way round). */
export function spansOf(spans: readonly ReadableSpan[]): SpanView[] {
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
  const depth = (span: ReadableSpan): number => {
    const parent = byId.get(span.parentSpanContext?.spanId ?? '');
    return parent === undefined ? 0 : 1 + depth(parent);
  };
  return [...spans]
    .sort((a, b) => depth(a) - depth(b))
    .map((span) => ({
      name: span.name,
      parent: byId.get(span.parentSpanContext?.spanId ?? '')?.name,
      attributes: Object.fromEntries(
        Object.entries(span.attributes).map(([key, value]) => [key.replace(/^tollgate\./, ''), value]),
      ),
      status: span.status.code === 2 ? 'error' : 'ok',
    }));
}

/** The spans, parent by parent, are those named, each with at least the attributes given. */
export function assertSpans(
  views: readonly SpanView[],
  expected: readonly (readonly [
    name: string,
    parent: string | undefined,
    attributes?: Record<string, unknown>,
  ])[],
): void {
  assert.deepEqual(
    views.map(({ name, parent }) => [name, parent]),
    expected.map(([name, parent]) => [name, parent]),
  );
  expected.forEach(([name, , attributes = {}], i) => {
    const actual = views[i]?.attributes ?? {};
    for (const [key, value] of Object.entries(attributes))
      assert.deepEqual(actual[key], value, `${name}: ${key}`);
  });
}
