// In a test worker every test file gets a `t` of its own: a subtest of the
// worker named after the file. A resolve hook sends `import t from 'tap'` of a
// file the worker runs to a module that hands out that file's subtest, so the
// file's tests, teardowns and plan are scoped to it as when tap ran it alone.
import { registerHooks } from 'node:module';
import type { Test } from 'tap';

const SCHEME = 'plinth-test-file:';
const tests = new Map<string, Test>();
const key = Symbol.for('plinth.test-file-tests');
(globalThis as Record<symbol, unknown>)[key] = tests;

registerHooks({
  resolve(specifier, context, next) {
    if (specifier === 'tap' && context.parentURL && tests.has(context.parentURL)) return { url: SCHEME + context.parentURL, shortCircuit: true };
    return next(specifier, context);
  },
  load(url, context, next) {
    if (!url.startsWith(SCHEME)) return next(url, context);
    const file = JSON.stringify(url.slice(SCHEME.length));
    return { format: 'module', source: `export default globalThis[Symbol.for('plinth.test-file-tests')].get(${file});`, shortCircuit: true };
  },
});

/** Imports a test file with `t` as its tap. */
export async function importWith(url: string, t: Test): Promise<void> {
  tests.set(url, t);
  await import(url);
}
