// Makes the PGlite snapshot the suite's kernels start from (pglite-snapshot.ts),
// ahead of `TEST_DB=pglite npm test`: .ci/run makes it beside the static checks,
// so no worker waits for it.
process.env.TEST_DB = 'pglite';
const { preparePgliteSnapshot } = await import('../helper.ts');
const started = performance.now();
const file = await preparePgliteSnapshot();
console.log(`PGlite snapshot ready in ${((performance.now() - started) / 1000).toFixed(1)} s: ${file}`);
// the kernel that made it may leave timers behind
process.exit(0);
