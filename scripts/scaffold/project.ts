// The project the scaffolder writes into: where manifests and tests live, and
// what the installed manifests already declare (entities, routes, codes), read
// with the kernel's own loader so the scaffolder sees what the kernel sees.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadManifests, type LoadedManifest } from '../../core/manifest/loader.ts';
import type { CrudRoute, ManifestEntity } from '../../core/manifest/format.ts';
import { badInput } from './errors.ts';

export interface Paths {
  root: string;
  manifestsDir: string;
  /** test/plugins: one folder per module */
  testsDir: string;
  /** test/helper.ts, which generated tests import */
  helperFile: string;
}

export interface InstalledEntity {
  module: string;
  entity: ManifestEntity;
  path?: string;
}

export interface Project {
  paths: Paths;
  manifests: LoadedManifest[];
  entities: Map<string, InstalledEntity>;
  /** CRUD and custom route paths → the module declaring them */
  routes: Map<string, string>;
  codes: Map<string, string>;
}

export function resolvePaths(opts: { root?: string; manifestsDir?: string; testsDir?: string }, env: NodeJS.ProcessEnv = process.env): Paths {
  const root = resolve(opts.root ?? '.');
  return {
    root,
    manifestsDir: resolve(root, opts.manifestsDir ?? env.MANIFESTS_DIR ?? 'manifests'),
    testsDir: resolve(root, opts.testsDir ?? 'test/plugins'),
    helperFile: join(root, 'test', 'helper.ts'),
  };
}

export async function openProject(paths: Paths): Promise<Project> {
  if (!existsSync(paths.manifestsDir)) throw badInput('--manifests-dir', `${paths.manifestsDir} does not exist`);
  let manifests: LoadedManifest[];
  try {
    manifests = await loadManifests(paths.manifestsDir);
  } catch (err) {
    throw badInput('installed manifests', `${(err as Error).message}; fix them before scaffolding`);
  }
  const entities = new Map<string, InstalledEntity>();
  const routes = new Map<string, string>();
  const codes = new Map<string, string>();
  for (const { manifest: m } of manifests) {
    for (const e of m.entities ?? []) entities.set(e.name, { module: m.id, entity: e });
    for (const r of m.routes ?? []) {
      routes.set(r.path, m.id);
      if ('entity' in r) {
        const installed = entities.get(r.entity);
        if (installed && !installed.path && crudHasCreate(r)) installed.path = r.path;
      }
    }
    for (const p of m.permissions ?? []) codes.set(p.code, m.id);
  }
  return { paths, manifests, entities, routes, codes };
}

const crudHasCreate = (r: CrudRoute) => !r.operations || r.operations.includes('create');

/** Paths the kernel serves itself; a module route must not start with one. */
export const KERNEL_PATHS = ['/api/auth', '/api/platform', '/api-docs', '/health'];
