// The bench uses the kernel's typed node-postgres (core/db/pg.ts).
export * from '../core/db/pg.ts';
export { default } from '../core/db/pg.ts';
