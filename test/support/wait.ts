// Waiting for background work (event dispatch, jobs) without fixed sleeps.

/** Calls `fn` every 50 ms until `ok` holds of its value or `ms` passed; the last value either way (the test asserts on it). */
export async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}
