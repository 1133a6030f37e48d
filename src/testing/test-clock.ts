// The clock the store contract hands each store under test, so that its tests move time by hand instead of sleeping.

/** A settable clock that every store under test reads instead of its own. */
export class TestClock {
  now = 1_800_000_000_000;
  readonly read = (): number => this.now;
}
