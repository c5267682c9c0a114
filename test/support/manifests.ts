// A manifests directory for one test file: the shipped manifests plus the
// test's own modules, removed when the test ends.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Teardown {
  teardown(fn: () => void): void;
}

/** A copy of manifests/ with `extra` added (file name → manifest); returns its path. */
export function manifestsWith(t: Teardown, extra: Record<string, object>): string {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-manifests-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync('manifests', dir, { recursive: true });
  for (const [file, manifest] of Object.entries(extra)) writeFileSync(join(dir, file), JSON.stringify(manifest));
  return dir;
}
