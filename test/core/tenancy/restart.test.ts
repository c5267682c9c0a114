// Data survives a restart and a restart migrates nothing. PGlite persists in a
// data directory (one open instance per directory: close, then reopen);
// PostgreSQL is the same database seen by two kernels one after the other.
import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../core/app.ts';
import type { Kernel } from '../../../core/kernel.ts';
import { migrateOutdatedTenants } from '../../../core/tenancy/migrate-tenants.ts';
import { pendingStatements } from '../../../core/db/migrator.ts';
import { VERSION_TABLE } from '../../../core/db/schema-versions.ts';
import { onPglite, PASSWORD } from '../../helper.ts';
import { kernelKit, randomId, type KernelKit } from '../../fixtures/kernels.ts';

async function started(kit: KernelKit): Promise<{ kernel: Kernel; app: FastifyInstance; stop: () => Promise<void> }> {
  const kernel = await kit.open();
  const app = await buildApp(kernel, { logger: false });
  await app.ready();
  return {
    kernel,
    app,
    stop: async () => {
      await app.close();
      await kernel.close();
    },
  };
}

const versionsOf = (kernel: Kernel, schema: string) =>
  kernel.dbs.main.em.getConnection().execute(`select module, version, digest, applied_at::text as applied_at from "${schema}"."${VERSION_TABLE}" order by module`);

t.test('a product written before a restart is there after it, and nothing is migrated again', async (t) => {
  const kit = await kernelKit(t, { persistent: true });
  const id = randomId('r');
  const email = `admin@${id}.test`;

  const first = await started(kit);
  t.equal(first.kernel.dbs.embedded, onPglite);
  if (onPglite) {
    t.equal(kit.config.pgliteInMemory, false);
    t.ok(existsSync(join(kit.config.dataDir, 'pglite', 'PG_VERSION')), 'PGlite keeps its cluster in the data directory');
  }
  const { tenant } = await kit.provision(first.kernel, id);
  const login = await first.app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: id, email, password: PASSWORD } });
  t.equal(login.statusCode, 200, login.body);
  const token = login.json().accessToken as string;
  const created = await first.app.inject({
    method: 'POST',
    url: '/api/products',
    headers: { authorization: `Bearer ${token}` },
    payload: { sku: 'KEEP-1', name: 'Survivor', price: '9.90' },
  });
  t.equal(created.statusCode, 201, created.body);
  const location = created.headers.location as string;
  const versions = await versionsOf(first.kernel, tenant.schema);
  const digest = first.kernel.digest;
  await first.stop();

  const second = await started(kit);
  t.teardown(() => second.stop());
  t.equal(second.kernel.digest, digest, 'same modules, same digest');
  const progress: string[] = [];
  t.same(await migrateOutdatedTenants(second.kernel, { onProgress: (_p, step) => progress.push(step.tenant.id) }), { migrated: 0, failed: [], unknownTables: [], plans: 0 });
  t.same(progress, []);
  t.same(await versionsOf(second.kernel, tenant.schema), versions, 'applied_at unchanged: no migration ran');
  t.same(await pendingStatements(second.kernel.dbs.main, tenant.schema), [], 'the schema still matches the modules');

  const again = await second.app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: id, email, password: PASSWORD } });
  t.equal(again.statusCode, 200, 'the admin still logs in');
  const read = await second.app.inject({ method: 'GET', url: location, headers: { authorization: `Bearer ${again.json().accessToken}` } });
  t.equal(read.statusCode, 200, read.body);
  t.match(read.json(), { sku: 'KEEP-1', name: 'Survivor', price: '9.90', version: 1 });
  const list = await second.app.inject({ method: 'GET', url: '/api/products', headers: { authorization: `Bearer ${token}` } });
  t.equal(list.statusCode, 200, 'a token issued before the restart is still valid');
  t.equal(list.json().total, 1);
});
