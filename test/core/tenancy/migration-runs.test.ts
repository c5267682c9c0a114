// Migrating many tenants: several at once with the same result as one at a
// time, progress counts that add up, a tenant's own failure that stops no
// other, a run stopped part way that the next run finishes, and a started
// server that serves current tenants at once while it migrates the others in
// the background (503 TENANT_MIGRATING with Retry-After until theirs is done,
// then 200 without a restart; a run stopped by a lost connection begins again).
// Each test has its own registry (kernelKit).
import t from 'tap';
import type { Kernel } from '../../../core/kernel.ts';
import { buildApp } from '../../../core/app.ts';
import { concurrencyFor, migrateOutdatedTenants, MigrationRun, type MigrateDeps, type MigrationProgress, type MigrationResult, type MigrationStep } from '../../../core/tenancy/migrate-tenants.ts';
import { BackgroundMigration } from '../../../core/tenancy/background-migration.ts';
import { VERSION_TABLE } from '../../../core/db/schema-versions.ts';
import { fingerprint, pendingStatements, scopedIntrospection } from '../../../core/db/migrator.ts';
import type { Tenant } from '../../../core/tenancy/registry.ts';
import { CORE_AND_CATALOG, entityOf, kernelKit, randomId, type KernelKit } from '../../fixtures/kernels.ts';
import { PASSWORD } from '../../helper.ts';

type Rows = Record<string, any>[];
const q = (kernel: Kernel, sql: string, params: unknown[] = []) => kernel.dbs.main.em.getConnection().execute(sql, params) as Promise<Rows>;

/** Tenants provisioned under core and catalog, ids in this order (the order a run takes them). */
async function provisionMany(kit: KernelKit, kernel: Kernel, prefix: string, n: number): Promise<Tenant[]> {
  const tag = randomId(prefix);
  const out: Tenant[] = [];
  for (let i = 0; i < n; i++) out.push((await kit.provision(kernel, `${tag}-${i}`)).tenant);
  return out;
}

/** As a start after a module change sees them: the recorded digest is not the loaded modules'. */
async function makeOutdated(kernel: Kernel, tenants: Tenant[]): Promise<void> {
  for (const tenant of tenants) await kernel.tenants.setDigest(tenant.id, 'an-older-digest');
}

/** Drift the migrator refuses to undo: a column retyped narrower than the manifest's (DESTRUCTIVE_MIGRATION). */
const breakSchema = (kernel: Kernel, tenant: Tenant) => q(kernel, `alter table "${tenant.schema}".catalog_products alter column sku type text`);

const digestOf = async (kernel: Kernel, id: string) => (await q(kernel, `select schema_digest as d from "${kernel.config.registrySchema}".tenants where id = ?`, [id]))[0].d as string;

/** A schema's tables, columns, keys and recorded versions, with its own name taken out so two tenants compare. */
async function shape(kernel: Kernel, schema: string) {
  const columns = await q(
    kernel,
    `select table_name, column_name, data_type, character_maximum_length, is_nullable, column_default
    from information_schema.columns where table_schema = ? order by table_name, column_name`,
    [schema],
  );
  const constraints = await q(kernel, 'select c.conname, pg_get_constraintdef(c.oid) as def from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = ? order by 1', [
    schema,
  ]);
  const indexes = await q(kernel, 'select indexname, indexdef from pg_indexes where schemaname = ? order by 1', [schema]);
  const versions = await q(kernel, `select module, version, digest from "${schema}"."${VERSION_TABLE}" order by module`);
  return JSON.parse(JSON.stringify({ columns, constraints, indexes, versions }).replaceAll(schema, '<schema>'));
}

/** Counts how many tenants a run has under way at once: it takes a connection to begin one and records the digest to end it. */
function counted(kernel: Kernel): { deps: MigrateDeps; most: () => number } {
  let now = 0;
  let most = 0;
  const deps: MigrateDeps = {
    ...kernel,
    dbs: {
      get: (key) => {
        most = Math.max(most, ++now);
        return kernel.dbs.get(key);
      },
    },
    tenants: {
      outdated: (digest) => kernel.tenants.outdated(digest),
      setDigest: async (id, digest) => {
        now--;
        await kernel.tenants.setDigest(id, digest);
      },
      setMigrationError: async (id, error) => {
        now--;
        await kernel.tenants.setMigrationError(id, error);
      },
    },
  };
  return { deps, most: () => most };
}

t.test('the tenants migrated several at once hold what those migrated one at a time hold', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  let k = await kit.open();
  const tenants = await provisionMany(kit, k, 'par', 5);
  await k.close();
  kit.edit('catalog.json', (m) => {
    const fields = entityOf(m, 'Product').fields;
    fields.ean = { type: 'string', maxLength: 13 };
    fields.origin = { type: 'string', maxLength: 2, required: true, default: 'EU' };
    m.entities.push({ name: 'Brand', scope: 'company', fields: { name: { type: 'string', required: true, maxLength: 80, unique: true } } });
  });
  k = await kit.open();
  const serial = tenants.slice(0, 2);
  const parallel = tenants.slice(2);
  t.same(await new MigrationRun(k, serial).run({ concurrency: 1 }), { migrated: 2, failed: [], unknownTables: [], plans: 1 }, 'one at a time');
  const { deps, most } = counted(k);
  t.same(await new MigrationRun(deps, parallel).run({ concurrency: 3 }), { migrated: 3, failed: [], unknownTables: [], plans: 1 }, 'three at once');
  t.ok(most() > 1 && most() <= 3, `several under way at once, never more than asked (${most()})`);

  const expected = await shape(k, serial[0].schema);
  t.ok(
    expected.columns.some((c: { column_name: string }) => c.column_name === 'ean'),
    'the change was applied',
  );
  for (const tenant of tenants) {
    t.same(await shape(k, tenant.schema), expected, `${tenant.id}: the same tables, columns, keys and versions`);
    t.equal(await digestOf(k, tenant.id), k.digest, `${tenant.id}: recorded`);
  }
  t.same(await k.tenants.outdated(k.digest), []);
});

t.test('one diff per schema state: a tenant that drifted is planned on its own and ends like the others', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  let k = await kit.open();
  const tenants = await provisionMany(kit, k, 'plan', 4);
  const run = (sql: string, params: unknown[] = []) => q(k, sql, params);
  const fp = async (tenant: Tenant) => (await fingerprint(run, tenant.schema)).hash;
  t.equal(new Set(await Promise.all(tenants.map(fp))).size, 1, 'tenants of one history share a fingerprint');
  // drift: an index dropped by hand in one tenant
  const [index] = await q(k, `select indexname from pg_indexes where schemaname = ? and tablename = 'catalog_products' and indexname not like '%pkey' order by 1 limit 1`, [tenants[2].schema]);
  await q(k, `drop index "${tenants[2].schema}"."${index.indexname}"`);
  t.not(await fp(tenants[2]), await fp(tenants[0]), 'the drifted tenant has a fingerprint of its own');
  await k.close();
  kit.edit('catalog.json', (m) => {
    entityOf(m, 'Product').fields.ean = { type: 'string', maxLength: 13 };
  });
  k = await kit.open();
  const result = await migrateOutdatedTenants(k, { concurrency: 2 });
  t.same([result.migrated, result.failed, result.plans], [4, [], 2], 'two diffs for four tenants');
  const expected = await shape(k, tenants[0].schema);
  t.ok(expected.indexes.some((i: { indexname: string }) => i.indexname === index.indexname));
  for (const tenant of tenants) t.same(await shape(k, tenant.schema), expected, `${tenant.id}: the same schema, the dropped index back`);
  t.equal(new Set(await Promise.all(tenants.map(fp))).size, 1, 'and the same fingerprint again');
  await k.close();
});

t.test("introspecting one schema reads that schema's catalog rows only", async (t) => {
  const kit = await kernelKit(t, { modules: CORE_AND_CATALOG });
  const k = await kit.open();
  const [a, b] = await provisionMany(kit, k, 'scope', 2);
  // objects in A that B lacks, under the names B's tables have: read across schemas, they would show up in B's diff
  await q(k, `alter table "${a.schema}".catalog_products add column only_in_a text`);
  await q(k, `create index catalog_products_only_in_a_index on "${a.schema}".catalog_products (only_in_a)`);
  await q(k, `alter table "${a.schema}".catalog_products add constraint only_in_a_check check (only_in_a <> '')`);
  scopedIntrospection.applied.clear();
  t.same(await pendingStatements(k.dbs.main, b.schema), [], 'B: nothing to do');
  t.equal(scopedIntrospection.applied.size, scopedIntrospection.rewrites, "every rewrite of MikroORM's introspection still matches its SQL");
  const forA = await pendingStatements(k.dbs.main, a.schema);
  t.ok(
    forA.some((s) => /drop column "only_in_a"/.test(s)),
    'A: its own column is seen',
  );
  await k.close();
});

t.test('how many at once: MIGRATE_CONCURRENCY, never more than half the pool', async (t) => {
  t.equal(concurrencyFor({ migrateConcurrency: 4, poolSize: 10 }), 4);
  t.equal(concurrencyFor({ migrateConcurrency: 16, poolSize: 10 }), 5);
  t.equal(concurrencyFor({ migrateConcurrency: 4, poolSize: 1 }), 1, 'always one');
  t.equal(concurrencyFor({ migrateConcurrency: 4, poolSize: 10 }, 8), 5, 'an explicit number is bounded too');
});

t.test('progress counts add up, and a failing tenant stops none of the others', async (t) => {
  const kit = await kernelKit(t, { modules: CORE_AND_CATALOG });
  const k = await kit.open();
  const tenants = await provisionMany(kit, k, 'prog', 5);
  await makeOutdated(k, tenants);
  const broken = [tenants[1], tenants[4]];
  for (const tenant of broken) await breakSchema(k, tenant);

  const seen: [MigrationProgress, MigrationStep][] = [];
  const result = await migrateOutdatedTenants(k, { concurrency: 3, onProgress: (p, step) => seen.push([p, step]) });
  t.same(result.migrated, 3);
  t.same(
    result.failed.map((f) => [f.tenant.id, f.error.code]),
    broken.map((b) => [b.id, 'DESTRUCTIVE_MIGRATION']),
    'the failed ones, in id order, with why',
  );
  t.equal(seen.length, 5, 'one report per tenant');
  t.same(
    seen.map(([p]) => p.done),
    [1, 2, 3, 4, 5],
    'done counts up by one',
  );
  let failedSoFar = 0;
  for (const [p, step] of seen) {
    if ('error' in step) failedSoFar++;
    t.match(p, { total: 5, failed: failedSoFar, migrated: p.done - failedSoFar, remaining: 5 - p.done }, `after ${step.tenant.id}`);
    t.ok(p.rate > 0 && p.elapsedMs > 0, 'a rate');
    t.ok(p.etaMs !== null && p.etaMs >= 0, 'an estimate');
  }
  t.equal(seen.at(-1)![0].etaMs, 0, 'nothing left at the end');
  t.same(
    seen
      .filter(([, s]) => 'error' in s)
      .map(([, s]) => s.tenant.id)
      .sort(),
    broken.map((b) => b.id),
  );

  await k.tenants.reload();
  for (const tenant of tenants) {
    const now = k.tenants.cached(tenant.id)!;
    if (broken.includes(tenant)) t.match(now, { schemaDigest: 'an-older-digest', migrationError: { code: 'DESTRUCTIVE_MIGRATION' } }, `${tenant.id} is marked`);
    else t.match(now, { schemaDigest: k.digest, migrationError: null }, `${tenant.id} is migrated`);
  }
});

t.test('a run stopped part way leaves its tenants recorded, and the next run migrates the rest', async (t) => {
  const kit = await kernelKit(t, { modules: CORE_AND_CATALOG });
  const k = await kit.open();
  const tenants = await provisionMany(kit, k, 'stop', 4);
  await makeOutdated(k, tenants);

  // as a kill between tenants: once two are done no tenant begins; the ones under way finish
  const stop = new AbortController();
  const first: string[] = [];
  const stopped = await migrateOutdatedTenants(k, {
    concurrency: 2,
    signal: stop.signal,
    onProgress: (p, step) => {
      first.push(step.tenant.id);
      if (p.done === 2) stop.abort();
    },
  });
  t.ok(stopped.migrated >= 2 && stopped.migrated < 4, `stopped after ${stopped.migrated}`);
  t.equal(first.length, stopped.migrated);
  for (const id of first) t.equal(await digestOf(k, id), k.digest, `${id} is recorded`);
  const rest = (await k.tenants.outdated(k.digest)).map((x) => x.id);
  t.same(
    rest.sort(),
    tenants.map((x) => x.id).filter((id) => !first.includes(id)),
    'the others are still outdated',
  );

  const second: string[] = [];
  t.same(await migrateOutdatedTenants(k, { concurrency: 2, onProgress: (_p, step) => second.push(step.tenant.id) }), { migrated: rest.length, failed: [], unknownTables: [], plans: 1 });
  t.same(second.sort(), rest, 'the next run takes exactly the rest');
  t.same(await k.tenants.outdated(k.digest), [], 'every tenant is current');
});

t.test('an error that is no tenant’s own stops the run: no tenant begins after it', async (t) => {
  const kit = await kernelKit(t, { modules: CORE_AND_CATALOG });
  const k = await kit.open();
  const tenants = await provisionMany(kit, k, 'gone', 4);
  await makeOutdated(k, tenants);
  let calls = 0;
  const lost = Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
  const deps: MigrateDeps = {
    ...k,
    dbs: {
      get: (key) => {
        if (++calls === 3) throw lost;
        return k.dbs.get(key);
      },
    },
  };
  const done: string[] = [];
  await t.rejects(migrateOutdatedTenants(deps, { concurrency: 1, onProgress: (_p, step) => done.push(step.tenant.id) }), lost);
  t.same(done, [tenants[0].id, tenants[1].id], 'the two before it are migrated, none after it began');
  t.same(
    (await k.tenants.outdated(k.digest)).map((x) => x.id),
    tenants.slice(2).map((x) => x.id),
    'the rest wait for the next run, unmarked',
  );
  await k.tenants.reload();
  t.equal(k.tenants.cached(tenants[2].id)!.migrationError, null, 'a lost connection is no failure of the tenant');
});

t.test('a started server serves current tenants at once and the others once the background migration reached them', async (t) => {
  const kit = await kernelKit(t, { modules: CORE_AND_CATALOG });
  // one at a time, so the order they finish in is the order they began in
  const k = await kit.open({ migrateConcurrency: 1 });
  const app = await buildApp(k, { logger: false });
  const [a, b, c, current] = await provisionMany(kit, k, 'bg', 4);
  const login = (tenant: Tenant) => app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: tenant.id, email: `admin@${tenant.id}.test`, password: PASSWORD } });
  const tokens = (await login(c)).json() as { accessToken: string; refreshToken: string };
  const me = (token: string) => app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });
  await makeOutdated(k, [a, b, c]);

  t.equal(await k.migrations.prepare(), 3, 'the server reads which tenants are outdated before it listens');
  const refusals = {
    request: await me(tokens.accessToken),
    login: await login(c),
    refresh: await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: tokens.refreshToken } }),
  };
  for (const [what, res] of Object.entries(refusals)) {
    t.same([res.statusCode, res.json().code], [503, 'TENANT_MIGRATING'], `${what}: not yet`);
    t.equal(res.headers['retry-after'], '5', `${what}: says when to try again`);
    t.match(res.headers['content-type'], 'application/problem+json');
  }
  t.equal((await login(current)).statusCode, 200, 'a current tenant is served at once');
  const ready = await app.inject({ method: 'GET', url: '/health/ready' });
  t.equal(ready.statusCode, 200, 'ready: the current tenants are served');
  t.match(ready.json(), { status: 'ok', migrating: { total: 3, done: 0, failed: 0, remaining: 3, etaSeconds: null } }, 'and says migrations are under way');

  const order: string[] = [];
  await k.migrations.start({ onProgress: (_p, step) => order.push(step.tenant.id) });
  t.equal(order[0], c.id, 'the tenant a request asked for went first');
  t.same([...order].sort(), [a.id, b.id, c.id]);
  t.equal((await me(tokens.accessToken)).statusCode, 200, 'then served, without a restart: the same token');
  for (const tenant of [a, b, c]) t.equal((await login(tenant)).statusCode, 200, `${tenant.id} logs in`);
  t.same((await app.inject({ method: 'GET', url: '/health/ready' })).json(), { status: 'ok' }, 'ready says nothing of migrations once they are done');
  await app.close();
});

t.test('while the background run is under way, a login waits for its tenant instead of telling it exists', async (t) => {
  const kit = await kernelKit(t, { modules: CORE_AND_CATALOG });
  const k = await kit.open({ migrateConcurrency: 1 });
  const app = await buildApp(k, { logger: false });
  t.teardown(() => app.close());
  const tenants = await provisionMany(kit, k, 'wait', 4);
  await makeOutdated(k, tenants);
  // each tenant takes a quarter of a second more: the login comes while the run is under way
  const slow: MigrateDeps = {
    ...k,
    tenants: {
      outdated: (digest) => k.tenants.outdated(digest),
      setMigrationError: (id, error) => k.tenants.setMigrationError(id, error),
      setDigest: async (id, digest) => {
        await new Promise((r) => setTimeout(r, 250));
        await k.tenants.setDigest(id, digest);
      },
    },
  };
  k.migrations = new BackgroundMigration(slow);
  await k.migrations.prepare();
  const order: string[] = [];
  const done = k.migrations.start({ onProgress: (_p, step) => order.push(step.tenant.id) });
  const last = tenants[3];
  const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: last.id, email: `admin@${last.id}.test`, password: PASSWORD } });
  t.equal(res.statusCode, 200, 'the login waited for the migration, then signed in');
  t.ok(order.indexOf(last.id) <= 1, `its tenant went to the front (finished ${order.indexOf(last.id) + 1}.)`);
  const unknown = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: 'no-such-tenant', email: 'a@b.test', password: PASSWORD } });
  t.same([unknown.statusCode, unknown.json().code], [401, 'INVALID_CREDENTIALS'], 'an unknown tenant: the same refusal as a wrong password');
  await done;
});

t.test('a tenant that failed answers TENANT_MIGRATION_FAILED, not TENANT_MIGRATING', async (t) => {
  const kit = await kernelKit(t, { modules: CORE_AND_CATALOG });
  const k = await kit.open();
  const app = await buildApp(k, { logger: false });
  const [tenant] = await provisionMany(kit, k, 'bad', 1);
  await makeOutdated(k, [tenant]);
  await breakSchema(k, tenant);
  await k.migrations.prepare();
  await k.migrations.start();
  const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: tenant.id, email: `admin@${tenant.id}.test`, password: PASSWORD } });
  t.same([res.statusCode, res.json().code], [503, 'TENANT_MIGRATION_FAILED']);
  await app.close();
});

t.test('in the background, a run stopped by a lost connection begins again after a pause and finishes', async (t) => {
  const kit = await kernelKit(t, { modules: CORE_AND_CATALOG });
  const k = await kit.open({ migrateConcurrency: 1 });
  const tenants = await provisionMany(kit, k, 'again', 3);
  await makeOutdated(k, tenants);
  let calls = 0;
  const deps: MigrateDeps = {
    ...k,
    dbs: {
      get: (key) => {
        if (++calls === 2) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
        return k.dbs.get(key);
      },
    },
  };
  const background = new BackgroundMigration(deps, { first: 200, longest: 400 });
  t.teardown(() => background.stop());
  await background.prepare();
  const stops: number[] = [];
  const refusedMeanwhile: string[] = [];
  const finished = new Promise<MigrationResult>((resolve) => {
    void background.start({
      onStopped: (_err, retryInMs) => {
        stops.push(retryInMs);
        // during the pause the tenants not yet migrated still answer 503
        for (const tenant of tenants) {
          try {
            background.assertMigrated(k.tenants.cached(tenant.id)!);
          } catch (err) {
            refusedMeanwhile.push(`${tenant.id} ${(err as { code: string }).code}`);
          }
        }
      },
      onDone: (result) => resolve(result),
    });
  });
  const result = await finished;
  t.same(stops, [200], 'stopped once, to begin again after the pause');
  t.same(
    refusedMeanwhile,
    tenants.slice(1).map((x) => `${x.id} TENANT_MIGRATING`),
    'meanwhile the tenants still to do answer 503 TENANT_MIGRATING',
  );
  t.same(result, { migrated: 2, failed: [], unknownTables: [], plans: 1 }, 'the second run took the rest');
  t.same(await k.tenants.outdated(k.digest), []);
  t.equal(background.progress(), undefined, 'nothing under way any more');
});
