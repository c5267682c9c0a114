// A manifests directory for one test file: the shipped manifests plus the
// test's own modules, removed when the test ends.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

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

/** The module SDK's URL, for a test module's plugin source to import. */
export const SDK_URL = pathToFileURL(resolve('core/plugin-api.ts')).href;

/**
 * The shipped modules (their plugins linked, so their imports resolve from
 * their real place) plus test modules: id → manifest (id, name, version and
 * dependsOn catalog filled in) and plugin source (plugins/<id>/index.ts).
 */
export function modulesWith(t: Teardown, extra: Record<string, { manifest: object; plugin: string }>): { manifestsDir: string; pluginsDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-modules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const manifestsDir = join(dir, 'manifests');
  const pluginsDir = join(dir, 'plugins');
  cpSync('manifests', manifestsDir, { recursive: true });
  mkdirSync(pluginsDir);
  for (const id of readdirSync('plugins')) symlinkSync(resolve('plugins', id), join(pluginsDir, id));
  for (const [id, { manifest, plugin }] of Object.entries(extra)) {
    writeFileSync(join(manifestsDir, `${id}.json`), JSON.stringify({ id, name: id, version: '1.0.0', dependsOn: ['catalog'], ...manifest }));
    mkdirSync(join(pluginsDir, id));
    writeFileSync(join(pluginsDir, id, 'index.ts'), plugin);
  }
  return { manifestsDir, pluginsDir };
}
