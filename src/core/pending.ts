// Whether a value comes later: the test every layer makes to stay synchronous when an answer is there at once.

/** A value that comes later (what `await` would wait for). */
export function isPending<T>(value: T | PromiseLike<T>): value is PromiseLike<T> & Promise<T> {
  return typeof (value as Partial<PromiseLike<T>> | null)?.then === 'function';
}
