// A dumped PGlite cluster every test file on TEST_DB=pglite starts from: the
// registry's tables, the job runner's and SPARES tenant schemas built ahead, as a
// kernel of the loaded modules leaves them. Loading it takes about a second where
// a fresh initdb takes 3–5, the kernel's open finds its tables made, and a test's
// first tenants rename a spare instead of running some 300 DDL statements each.
// Made once per machine and source: the file name holds a digest of the PGlite
// and pg-boss versions and of every manifest and kernel file.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../core/config.ts';
import { writeWhole } from './write-whole.ts';

/**
 * spare tenant schemas in the snapshot: most test files make one to three tenants, and
 * the kernel refills only below PROVISION_SPARES (2); each costs about 40 ms to load
 */
const SPARES = 6;

const root = join(import.meta.dirname, '../..');
const pkg = createRequire(import.meta.url)('../../package.json') as { devDependencies: Record<string, string>; dependencies: Record<string, string> };

/** Every file whose change could change what the snapshot holds. */
function sourceDigest(): string {
  const hash = createHash('sha256').update(`${pkg.devDependencies['@electric-sql/pglite']} ${pkg.dependencies['pg-boss']} ${SPARES}`);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|json)$/.test(entry.name)) hash.update(path.slice(root.length)).update(readFileSync(path));
    }
  };
  for (const dir of ['core', 'manifests', 'plugins']) walk(join(root, dir));
  return hash.digest('hex').slice(0, 16);
}

/** Snapshots of earlier sources (some 80 MB each) once unused for an hour: another checkout may still load its own. */
function dropStaleSnapshots(current: string): void {
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (!/^plinth-pglite-.*\.tar(\.gz)?$/.test(name) || path === current) continue;
    if (Date.now() - statSync(path).atimeMs > 3_600_000) rmSync(path, { force: true });
  }
}

let file: string | undefined;
/** Where the snapshot of this source is (or goes). */
export function pgliteSnapshotFile(): string {
  file ??= join(tmpdir(), `plinth-pglite-${sourceDigest()}.tar`);
  return file;
}

/**
 * The snapshot's path, made first when missing. One process makes it (a lock
 * file taken with O_EXCL); the files starting beside it wait for it rather than
 * each building their own on a machine already busy. A lock older than two
 * minutes is one a killed run left: taken over.
 */
export async function preparePgliteSnapshot(config: (overrides: Partial<Config>) => Config): Promise<string> {
  const file = pgliteSnapshotFile();
  const lock = `${file}.lock`;
  for (;;) {
    if (existsSync(file)) return file;
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) rmSync(lock, { force: true });
      else await sleep(200);
    }
  }
  try {
    if (!existsSync(file)) await makeSnapshot(file, config);
  } finally {
    rmSync(lock, { force: true });
  }
  return file;
}

async function makeSnapshot(file: string, config: (overrides: Partial<Config>) => Config): Promise<void> {
  const { openKernel } = await import('../../core/kernel.ts');
  const { PGlite } = await import('@electric-sql/pglite');
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-pglite-snapshot-'));
  try {
    // on disk, so that a second PGlite can dump what the kernel left once it closed
    const kernel = await openKernel(config({ pgliteInMemory: false, dataDir, pgliteSnapshot: undefined, provisionSpares: SPARES }));
    try {
      await kernel.spares.refill();
    } finally {
      await kernel.close();
    }
    const pg = await PGlite.create(join(dataDir, 'pglite'));
    // uncompressed: loading skips the gunzip, and /tmp holds it easily
    const dump = Buffer.from(await (await pg.dumpDataDir('none')).arrayBuffer());
    await pg.close();
    writeWhole(file, dump);
    dropStaleSnapshots(file);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
