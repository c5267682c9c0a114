// The tenancy figures of issue 17 at the scale the bench provisioned (--tenants N):
// provisioning with a spare schema ready and without one, and a one-field module
// change migrated across every tenant (plans made, tenants per second). The change
// is undone afterwards (the column dropped, the recorded digests put back), so the
// tenants stay the bench's own modules' and the next run finds nothing to migrate.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openKernel, type Kernel } from '../core/kernel.ts';
import { provisionTenant } from '../core/tenancy/provision.ts';
import { MigrationRun } from '../core/tenancy/migrate-tenants.ts';
import { VERSION_TABLE } from '../core/db/schema-versions.ts';
import { dropTenant, SAMPLE_PREFIX } from './fixtures.ts';

export interface TenancyScaleResult {
  tenants: number;
  provisioning: { withSpare: Timings; withoutSpare: Timings };
  migration: { tenants: number; seconds: number; tenantsPerSecond: number; plans: number; failed: number; concurrency: number; projectedSecondsFor10k: number };
  load: { before: number; after: number };
}

interface Timings {
  samples: number;
  medianMs: number;
  p90Ms: number;
}

const PROBE_FIELD = 'benchProbe';
const PROBE_COLUMN = 'bench_probe';

function timings(ms: number[]): Timings {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]);
  return { samples: ms.length, medianMs: at(50), p90Ms: at(90) };
}

async function timeProvisionings(kernel: Kernel, tag: string, n: number, spare: boolean): Promise<Timings> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    if (spare) await kernel.spares.refill();
    else await kernel.spares.dropAll();
    const id = `${SAMPLE_PREFIX}${tag}-${spare ? 's' : 'd'}${i}`;
    const t0 = performance.now();
    await provisionTenant(kernel, { id, name: id, company: { code: 'HQ', name: 'HQ' }, admin: { email: `admin@${id}.bench.test`, name: 'A', password: 'bench-password-not-secret' } });
    ms.push(performance.now() - t0);
    await kernel.spares.idle();
    await dropTenant(kernel, id);
  }
  return timings(ms);
}

/** The manifests with one optional field added to Product: the smallest module change there is. */
function changedManifests(kernel: Kernel): string {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-bench-manifests-'));
  cpSync(kernel.config.manifestsDir, dir, { recursive: true });
  const file = join(dir, 'catalog.json');
  const catalog = JSON.parse(readFileSync(file, 'utf8'));
  catalog.entities.find((e: { name: string }) => e.name === 'Product').fields[PROBE_FIELD] = { type: 'string', maxLength: 20 };
  writeFileSync(file, JSON.stringify(catalog, null, 2));
  return dir;
}

export async function tenancyScale(kernel: Kernel, tenantIds: string[], tag: string, log: (m: string) => void): Promise<TenancyScaleResult> {
  const before = loadavg()[0];
  log(`tenancy scale: provisioning with and without a spare schema at ${tenantIds.length} tenants`);
  const withSpare = await timeProvisionings(kernel, tag, 15, true);
  const withoutSpare = await timeProvisionings(kernel, tag, 15, false);
  await kernel.spares.refill();

  log(`tenancy scale: a one-field change to Product, migrated across ${tenantIds.length} tenants`);
  const dir = changedManifests(kernel);
  const changed = await openKernel({ ...kernel.config, manifestsDir: dir, provisionSpares: 0 });
  const ours = new Set(tenantIds);
  let migration: TenancyScaleResult['migration'];
  try {
    const run = new MigrationRun(
      changed,
      (await changed.tenants.outdated(changed.digest)).filter((t) => ours.has(t.id)),
    );
    const t0 = performance.now();
    const result = await run.run();
    const seconds = (performance.now() - t0) / 1000;
    const tenantsPerSecond = run.total / seconds;
    migration = {
      tenants: run.total,
      seconds: Math.round(seconds * 10) / 10,
      tenantsPerSecond: Math.round(tenantsPerSecond * 10) / 10,
      plans: result.plans,
      failed: result.failed.length,
      concurrency: changed.config.migrateConcurrency,
      projectedSecondsFor10k: Math.round(10_000 / tenantsPerSecond),
    };
  } finally {
    await changed.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // undone: each tenant back at the bench's own modules, as if the change had never been made
  const conn = kernel.dbs.main.em.getConnection();
  const catalog = kernel.versions.find((v) => v.module === 'catalog')!;
  for (const id of tenantIds) {
    const tenant = (await kernel.tenants.find(id))!;
    await kernel.dbs.main.em.fork().transactional(async (tem) => {
      const ctx = tem.getTransactionContext();
      const run = (sql: string, params: unknown[] = []) => tem.getConnection().execute(sql, params, 'run', ctx);
      await run(`alter table "${tenant.schema}"."${kernel.model('Product').table}" drop column if exists "${PROBE_COLUMN}"`);
      await run(`update "${tenant.schema}"."${VERSION_TABLE}" set digest = ? where module = 'catalog'`, [catalog.digest]);
    });
    await conn.execute(`update "${kernel.config.registrySchema}".tenants set schema_digest = ? where id = ?`, [kernel.digest, id]);
  }
  await kernel.tenants.reload();
  return { tenants: tenantIds.length, provisioning: { withSpare, withoutSpare }, migration, load: { before, after: loadavg()[0] } };
}
