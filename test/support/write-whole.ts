import { renameSync, writeFileSync } from 'node:fs';

/** Writes `path` whole or not at all (a temp file, then a rename): processes reading it at the same time never see half of it. */
export function writeWhole(path: string, data: string | Buffer): void {
  const partial = `${path}.${process.pid}`;
  writeFileSync(partial, data);
  renameSync(partial, path);
}
