// Prometheus's text exposition format, written by hand so that the service needs no metrics client.

/** Label values as name to value, in the order they are written. */
export type Labels = Readonly<Record<string, string>>;

/** A label value as the format quotes it: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

function labelsText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** The lines of one exposition, a family (its HELP and TYPE, then its samples) at a time. */
export class Exposition {
  readonly #lines: string[] = [];

  /** Starts a family; `help` is one line of plain text, backslashes and line feeds escaped. */
  family(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): this {
    this.#lines.push(`# HELP ${name} ${help.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')}`);
    this.#lines.push(`# TYPE ${name} ${type}`);
    return this;
  }

  sample(name: string, labels: Labels, value: number): this {
    this.#lines.push(`${name}${labelsText(labels)} ${value}`);
    return this;
  }

  /** The whole text, ending in a line feed as the format requires. */
  text(): string {
    return this.#lines.length === 0 ? '' : `${this.#lines.join('\n')}\n`;
  }
}

/** A histogram's counts per bucket, taking observations in ms and written in seconds, Prometheus's base unit. */
export class MsHistogram {
  /** Upper bounds in ms, ascending. */
  readonly #boundsMs: readonly number[];
  /** Observations per bucket, not cumulated: the last is those above every bound. */
  readonly #counts: number[];
  #sumMs = 0;

  constructor(boundsMs: readonly number[]) {
    this.#boundsMs = boundsMs;
    this.#counts = new Array<number>(boundsMs.length + 1).fill(0);
  }

  observe(ms: number): void {
    let bucket = this.#boundsMs.findIndex((bound) => ms <= bound);
    if (bucket === -1) bucket = this.#boundsMs.length;
    this.#counts[bucket] = (this.#counts[bucket] ?? 0) + 1;
    this.#sumMs += ms;
  }

  /** Its `_bucket` (cumulative, `le` in seconds, through +Inf), `_sum` and `_count` samples. */
  write(exposition: Exposition, name: string, labels: Labels): void {
    let cumulative = 0;
    this.#counts.forEach((count, bucket) => {
      cumulative += count;
      const bound = this.#boundsMs[bucket];
      const le = bound === undefined ? '+Inf' : String(bound / 1000);
      exposition.sample(`${name}_bucket`, { ...labels, le }, cumulative);
    });
    exposition.sample(`${name}_sum`, labels, this.#sumMs / 1000);
    exposition.sample(`${name}_count`, labels, cumulative);
  }
}
