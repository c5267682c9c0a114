// The kernel's clock: what "now" is for module code (ctx.now()) and for the
// work it schedules (leases, presence, expiry). Production reads the system
// clock; tests hand the kernel a ManualClock (config.clock) and move it, so
// "15 minutes later" needs no sleeping.
export interface Clock {
  /** the current time */
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until it is set or advanced. */
export class ManualClock implements Clock {
  #at: number;

  /** stands at `at` (a Date, an ISO string or ms since the epoch), default the system's time now */
  constructor(at: Date | string | number = Date.now()) {
    this.#at = new Date(at).getTime();
  }

  /** the time it stands at, as a new Date */
  now(): Date {
    return new Date(this.#at);
  }

  /** moves it to `at` (a Date, an ISO string or ms since the epoch), forwards or back */
  set(at: Date | string | number): void {
    this.#at = new Date(at).getTime();
  }

  /** moves it `ms` milliseconds forwards (backwards when negative): clock.advance(15 * 60_000) is "15 minutes later" */
  advance(ms: number): void {
    this.#at += ms;
  }
}
