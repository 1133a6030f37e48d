// The jobs being served, by when each ends: a binary heap, as small as the service's workers.

export class CompletionHeap<T> {
  readonly #at: number[] = [];
  readonly #items: T[] = [];

  /** When the first job ends; Infinity if none is being served. */
  get nextAt(): number {
    return this.#at[0] ?? Number.POSITIVE_INFINITY;
  }

  push(at: number, item: T): void {
    let i = this.#at.length;
    this.#at.push(at);
    this.#items.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.#at[parent] as number) <= at) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** Takes the job that ends first; the heap must not be empty. */
  pop(): T {
    const top = this.#items[0] as T;
    const last = this.#at.length - 1;
    this.#swap(0, last);
    this.#at.pop();
    this.#items.pop();
    for (let i = 0; ; ) {
      const left = 2 * i + 1;
      let least = i;
      if (left < last && (this.#at[left] as number) < (this.#at[least] as number)) least = left;
      if (left + 1 < last && (this.#at[left + 1] as number) < (this.#at[least] as number)) least = left + 1;
      if (least === i) return top;
      this.#swap(i, least);
      i = least;
    }
  }

  #swap(a: number, b: number): void {
    [this.#at[a], this.#at[b]] = [this.#at[b] as number, this.#at[a] as number];
    [this.#items[a], this.#items[b]] = [this.#items[b] as T, this.#items[a] as T];
  }
}
