// The kernel's clock: what "now" is for module code (ctx.now()) and for the
// work it schedules (leases, presence, expiry). Production reads the system
// clock; tests hand the kernel a ManualClock (config.clock) and move it, so
// "15 minutes later" needs no sleeping.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until it is set or advanced. */
export class ManualClock implements Clock {
  #at: number;

  constructor(at: Date | string | number = Date.now()) {
    this.#at = new Date(at).getTime();
  }

  now(): Date {
    return new Date(this.#at);
  }

  set(at: Date | string | number): void {
    this.#at = new Date(at).getTime();
  }

  advance(ms: number): void {
    this.#at += ms;
  }
}
