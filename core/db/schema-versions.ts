// What each tenant schema records about the module schemas it holds, and the
// digest start compares against (one query over the registry, however many tenants).
import { createHash } from 'node:crypto';
import type { Manifest } from '../manifest/format.ts';

export const VERSION_TABLE = 'plinth_schema_versions';
/** Bump when the kernel changes how manifests map to tables. */
const KERNEL_SCHEMA_REVISION = 1;

export interface ModuleVersion {
  module: string;
  version: string;
  digest: string;
}

const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);

export function moduleVersions(manifests: Manifest[]): ModuleVersion[] {
  return manifests.map((m) => ({ module: m.id, version: m.version, digest: hash([KERNEL_SCHEMA_REVISION, m.entities ?? []]) }));
}

/** One digest over every module: a tenant holding it needs no migration. */
export function schemaDigest(versions: ModuleVersion[]): string {
  return hash(versions.map((v) => [v.module, v.digest]));
}

export const versionTableSql = (schema: string) => [
  `create table if not exists "${schema}"."${VERSION_TABLE}" (module text primary key, version text not null, digest text not null, applied_at timestamptz not null default now())`,
];
