// Tenant schema migrations when manifests change between starts: additive
// changes are applied tenant by tenant and recorded, destructive ones refused
// with the schema untouched, one tenant's migration never touches another's
// tables, and a failed run resumes where it stopped. Each test has its own
// registry (so it migrates only its tenants) and kernels opened in sequence.
import t from 'tap';
import type { Kernel } from '../../../core/kernel.ts';
import { migrateOutdatedTenants, migrateTenant, type MigrationStep } from '../../../core/tenancy/migrate-tenants.ts';
import { DestructiveChangeError, MigrationFailedError, pendingStatements, requiredColumnsAdded, splitStatements } from '../../../core/db/migrator.ts';
import { VERSION_TABLE } from '../../../core/db/schema-versions.ts';
import type { Tenant } from '../../../core/tenancy/registry.ts';
import { CORE_AND_CATALOG, entityOf, kernelKit, randomId, type Json, type KernelKit } from '../../fixtures/kernels.ts';
import { buildApp } from '../../../core/app.ts';
import { PASSWORD } from '../../helper.ts';

type Rows = Record<string, any>[];
const q = (kernel: Kernel, sql: string, params: unknown[] = []) => kernel.dbs.main.em.getConnection().execute(sql, params) as Promise<Rows>;
const product = (m: Json) => entityOf(m, 'Product').fields as Json;
/** statements a migrated tenant's step applied; -1 for one that failed */
const appliedBy = (step: MigrationStep) => ('applied' in step ? step.applied : -1);

/** Opens a kernel on the kit's database, runs fn, and always closes it (PGlite allows one instance per directory). */
async function withKernel<T>(kit: KernelKit, fn: (kernel: Kernel) => Promise<T>): Promise<T> {
  const kernel = await kit.open();
  try {
    return await fn(kernel);
  } finally {
    await kernel.close();
  }
}

async function addProduct(kernel: Kernel, tenant: Tenant, companyId: string, sku: string, extra: Json = {}): Promise<void> {
  const em = kernel.dbs.main.em.fork({ schema: tenant.schema });
  em.create(kernel.model('Product').ormEntity, { companyId, sku, name: { en: sku }, price: '1.00', currency: 'EUR', ...extra } as never);
  await em.flush();
}

/** Everything about a tenant schema a migration could change. */
async function snapshot(kernel: Kernel, schema: string) {
  const columns = await q(
    kernel,
    `select table_name, column_name, data_type, character_maximum_length, is_nullable, column_default
    from information_schema.columns where table_schema = ? order by table_name, column_name`,
    [schema],
  );
  const tables = [...new Set(columns.map((c) => c.table_name as string))];
  const counts: Record<string, number> = {};
  for (const table of tables) counts[table] = (await q(kernel, `select count(*)::int as n from "${schema}"."${table}"`))[0].n;
  const constraints = await q(kernel, `select c.conname from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = ? order by 1`, [schema]);
  const indexes = await q(kernel, 'select indexname from pg_indexes where schemaname = ? order by 1', [schema]);
  const versions = await q(kernel, `select module, version, digest, applied_at::text as applied_at from "${schema}"."${VERSION_TABLE}" order by module`);
  return { tables, columns, counts, constraints, indexes, versions };
}

const columnNames = async (kernel: Kernel, schema: string, table: string) =>
  (await q(kernel, 'select column_name from information_schema.columns where table_schema = ? and table_name = ? order by 1', [schema, table])).map((r) => r.column_name as string);

async function recordedDigest(kernel: Kernel, id: string): Promise<string | null> {
  await kernel.tenants.reload();
  return kernel.tenants.cached(id)!.schemaDigest;
}

t.test('an additive change is applied to an existing tenant and recorded', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  const { tenant, companyId, before } = await withKernel(kit, async (k) => {
    const r = await kit.provision(k);
    await addProduct(k, r.tenant, r.companyId, 'OLD-1');
    return { ...r, before: k.digest };
  });
  kit.edit('catalog.json', (m) => {
    product(m).ean = { type: 'string', maxLength: 13 };
    product(m).origin = { type: 'string', maxLength: 2, required: true, default: 'EU' };
    m.entities.push({ name: 'Brand', scope: 'company', fields: { name: { type: 'string', required: true, maxLength: 80, unique: true } } });
  });
  await withKernel(kit, async (k) => {
    t.not(k.digest, before, 'the loaded modules have a new digest');
    const progress: [number, number, string, number][] = [];
    const result = await migrateOutdatedTenants(k, { onProgress: (p, step) => progress.push([p.done, p.total, step.tenant.id, appliedBy(step)]) });
    t.same(result, { migrated: 1, failed: [], unknownTables: [], plans: 1 });
    t.equal(progress.length, 1);
    t.same(progress[0].slice(0, 3), [1, 1, tenant.id]);
    t.ok(progress[0][3] >= 2, 'statements were applied');

    t.ok((await columnNames(k, tenant.schema, 'catalog_products')).includes('ean'));
    t.ok((await columnNames(k, tenant.schema, 'catalog_brands')).includes('company_id'));
    const [row] = await q(k, `select sku, ean, origin from "${tenant.schema}".catalog_products`);
    t.same(row, { sku: 'OLD-1', ean: null, origin: 'EU' }, 'existing rows keep their data and get the default');

    const versions = await q(k, `select module, version, digest from "${tenant.schema}"."${VERSION_TABLE}" order by module`);
    t.same(
      versions,
      k.versions.map((v) => ({ ...v })).sort((a, b) => a.module.localeCompare(b.module)),
    );
    t.equal(await recordedDigest(k, tenant.id), k.digest, 'the registry records the new digest');
    t.same(await k.tenants.outdated(k.digest), []);
    t.same(await pendingStatements(k.dbs.main, tenant.schema), [], 'the schema matches the modules');

    await addProduct(k, tenant, companyId, 'NEW-1', { ean: '4006381333931' });
    t.same(await migrateOutdatedTenants(k), { migrated: 0, failed: [], unknownTables: [], plans: 0 }, 'a second run finds nothing to do');
  });
});

t.test('a start with unchanged manifests migrates nothing', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  const { tenant, first } = await withKernel(kit, async (k) => {
    const r = await kit.provision(k);
    return { ...r, first: await snapshot(k, r.tenant.schema) };
  });
  await withKernel(kit, async (k) => {
    t.same(await k.tenants.outdated(k.digest), []);
    const progress: string[] = [];
    t.same(await migrateOutdatedTenants(k, { onProgress: (_p, step) => progress.push(step.tenant.id) }), { migrated: 0, failed: [], unknownTables: [], plans: 0 });
    t.same(progress, []);
    t.same(await snapshot(k, tenant.schema), first, 'versions keep their applied_at: nothing ran');
  });
  kit.edit('catalog.json', (m) => {
    product(m).sku.label = 'Article number';
  });
  await withKernel(kit, async (k) => {
    t.same(await migrateOutdatedTenants(k, { onProgress: (_p, step) => t.equal(appliedBy(step), 0, 'a label changes no table') }), { migrated: 1, failed: [], unknownTables: [], plans: 1 });
    const after = await snapshot(k, tenant.schema);
    t.same({ ...after, versions: [] }, { ...first, versions: [] });
    t.equal(await recordedDigest(k, tenant.id), k.digest);
  });
});

t.test('a destructive change is refused and leaves the schema untouched', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  const { tenant, before, digest } = await withKernel(kit, async (k) => {
    const r = await kit.provision(k);
    await addProduct(k, r.tenant, r.companyId, 'KEEP-1', { attributes: { colour: 'red' } });
    return { ...r, before: await snapshot(k, r.tenant.schema), digest: k.digest };
  });
  const cases: [string, (m: Json) => void, RegExp][] = [
    [
      'removed field',
      (m) => {
        delete product(m).attributes;
      },
      /^alter table "[^"]+"\."catalog_products" drop column "attributes"$/,
    ],
    [
      'changed type',
      (m) => {
        product(m).stock = { type: 'decimal' };
      },
      /alter column "stock" type numeric\(12,2\)/,
    ],
    [
      'shorter text',
      (m) => {
        product(m).sku.maxLength = 10;
      },
      /alter column "sku" type varchar\(10\)/,
    ],
    [
      'string made translatable',
      (m) => {
        // (the price names it as its currency: that goes too)
        delete product(m).price.currency;
        product(m).currency = { type: 'string', translatable: true };
      },
      /alter column "currency" type jsonb/,
    ],
    [
      'renamed field (one removed, one added of the same type)',
      (m) => {
        product(m).extras = product(m).attributes;
        delete product(m).attributes;
      },
      /rename column "attributes" to "extras"|drop column "attributes"/,
    ], // 7.2 guesses a rename
  ];
  for (const [name, mutate, statement] of cases) {
    await t.test(name, async (t) => {
      kit.edit('catalog.json', mutate);
      t.teardown(() => kit.reset('catalog.json'));
      await withKernel(kit, async (k) => {
        const { migrated, failed } = await migrateOutdatedTenants(k);
        t.same([migrated, failed.map((f) => f.tenant.id)], [0, [tenant.id]], 'the tenant failed alone');
        const e = failed[0].error;
        t.equal(e.code, 'DESTRUCTIVE_MIGRATION');
        t.match(e.message, tenant.schema);
        await k.tenants.reload();
        t.same(k.tenants.cached(tenant.id)!.migrationError, e, 'the registry keeps why');
        await t.rejects(migrateTenant(k, tenant), DestructiveChangeError, 'one tenant alone throws');
        t.ok(
          e.statements.some((s) => statement.test(s)),
          `names the statement: ${e.statements.join(' | ')}`,
        );
        t.same(await snapshot(k, tenant.schema), before, 'schema, rows and versions untouched');
        t.equal(await recordedDigest(k, tenant.id), digest, 'the registry still records the old digest');
      });
    });
  }
  await t.test('a wider column is no loss and is applied', async (t) => {
    kit.edit('catalog.json', (m) => {
      product(m).sku.maxLength = 100;
      product(m).price.precision = 14;
      product(m).description = { type: 'text', translatable: true };
      product(m).currency.maxLength = 3;
    });
    t.teardown(() => kit.reset('catalog.json'));
    await withKernel(kit, async (k) => {
      t.same(await migrateOutdatedTenants(k), { migrated: 1, failed: [], unknownTables: [], plans: 1 });
      const [sku] = await q(k, `select character_maximum_length as n from information_schema.columns where table_schema = ? and table_name = 'catalog_products' and column_name = 'sku'`, [
        tenant.schema,
      ]);
      t.equal(sku.n, 100);
      t.same(await q(k, `select sku from "${tenant.schema}".catalog_products`), [{ sku: 'KEEP-1' }]);
    });
  });
});

t.test('tables the modules do not know are kept and reported, not a reason to refuse', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  const { tenant } = await withKernel(kit, async (k) => {
    const r = await kit.provision(k);
    await addProduct(k, r.tenant, r.companyId, 'KEPT-1');
    await q(k, `create table "${r.tenant.schema}".operator_notes (id int primary key, note text)`);
    await q(k, `insert into "${r.tenant.schema}".operator_notes values (1, 'by hand')`);
    return r;
  });
  await t.test('an operator’s table beside an additive change', async (t) => {
    kit.edit('catalog.json', (m) => {
      product(m).ean = { type: 'string', maxLength: 13 };
    });
    await withKernel(kit, async (k) => {
      const result = await migrateOutdatedTenants(k);
      t.same([result.migrated, result.failed, result.plans], [1, [], 1]);
      t.same(
        result.unknownTables.map((u) => [u.tenant.id, u.tables]),
        [[tenant.id, ['operator_notes']]],
        'reported',
      );
      t.ok((await columnNames(k, tenant.schema, 'catalog_products')).includes('ean'), 'the change was applied');
      t.same(await q(k, `select note from "${tenant.schema}".operator_notes`), [{ note: 'by hand' }], 'the table and its row are kept');
    });
  });
  await t.test('a removed entity: its table and rows are kept', async (t) => {
    kit.edit('catalog.json', (m) => {
      m.entities = m.entities.filter((e: Json) => e.name !== 'Product');
      m.routes = m.routes.filter((r: Json) => r.entity !== 'Product');
      for (const p of m.permissions) for (const g of p.grants) g.subject = ['Category'];
    });
    await withKernel(kit, async (k) => {
      const result = await migrateOutdatedTenants(k);
      t.same([result.migrated, result.failed], [1, []], 'migrated, not refused');
      t.same(
        result.unknownTables.map((u) => [u.tenant.id, u.tables]),
        [[tenant.id, ['catalog_products', 'operator_notes']]],
        'both tables reported',
      );
      t.same(await q(k, `select sku from "${tenant.schema}".catalog_products`), [{ sku: 'KEPT-1' }], 'the rows are still there');
      t.equal(await recordedDigest(k, tenant.id), k.digest);
    });
  });
});

t.test('migrating one tenant never touches another', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  // B is created under the shipped modules
  const b = await withKernel(kit, async (k) => {
    const r = await kit.provision(k, randomId('b'));
    await addProduct(k, r.tenant, r.companyId, 'B-1');
    await addProduct(k, r.tenant, r.companyId, 'B-2');
    return { ...r, digest: k.digest };
  });
  // A is created after a field was added, so the two tenants hold different digests
  kit.edit('catalog.json', (m) => {
    product(m).ean = { type: 'string', maxLength: 13 };
  });
  const a = await withKernel(kit, async (k) => {
    const before = await snapshot(k, b.tenant.schema);
    const r = await kit.provision(k, randomId('a'));
    await addProduct(k, r.tenant, r.companyId, 'A-1', { ean: '123' });
    t.same(await snapshot(k, b.tenant.schema), before, 'creating A left B alone');
    t.equal(await recordedDigest(k, b.tenant.id), b.digest);
    return r;
  });
  kit.edit('catalog.json', (m) => {
    m.entities.push({ name: 'Brand', scope: 'company', fields: { name: { type: 'string', required: true } } });
  });
  await withKernel(kit, async (k) => {
    const before = await snapshot(k, b.tenant.schema);
    const applied = await migrateTenant(k, a.tenant);
    t.ok(applied > 0);
    t.ok((await columnNames(k, a.tenant.schema, 'catalog_brands')).length > 0, 'A has the new table');
    t.same(await snapshot(k, b.tenant.schema), before, 'B: same tables, columns, constraints, rows and versions');
    t.equal(await recordedDigest(k, b.tenant.id), b.digest, 'B is still recorded under its digest');

    // B, two changes behind, migrates on its own from where it is
    const progress: [string, number][] = [];
    t.same(await migrateOutdatedTenants(k, { onProgress: (_p, step) => progress.push([step.tenant.id, appliedBy(step)]) }), { migrated: 1, failed: [], unknownTables: [], plans: 1 });
    t.same(
      progress.map(([id]) => id),
      [b.tenant.id],
      'only B was outdated',
    );
    t.ok(progress[0][1] > applied, 'B needed the field and the table');
    for (const table of ['catalog_products', 'catalog_brands']) {
      t.same(await columnNames(k, b.tenant.schema, table), await columnNames(k, a.tenant.schema, table), `${table}: A and B now match`);
    }
    t.same((await snapshot(k, b.tenant.schema)).counts.catalog_products, 2, "B's rows are kept");
    t.equal(await recordedDigest(k, b.tenant.id), k.digest);
    t.equal(await recordedDigest(k, a.tenant.id), k.digest);
  });
});

t.test('a failed run leaves migrated tenants recorded and resumes on the rest', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  const [ta, tb, tc] = await withKernel(kit, async (k) => {
    // ids sort a < b < c, the order in which tenants are migrated
    const all = [await kit.provision(k, randomId('ra')), await kit.provision(k, randomId('rb')), await kit.provision(k, randomId('rc'))];
    await addProduct(k, all[1].tenant, all[1].companyId, 'B-1');
    return all;
  });
  // a new optional field and a new REQUIRED field without default: fine on an empty table, impossible on B's
  kit.edit('catalog.json', (m) => {
    product(m).note = { type: 'text' };
    product(m).ean = { type: 'string', maxLength: 13, required: true };
  });
  await withKernel(kit, async (k) => {
    const before = await snapshot(k, tb.tenant.schema);
    const digestBefore = await recordedDigest(k, tb.tenant.id);
    const done: string[] = [];
    const reported: string[] = [];
    const { migrated, failed } = await migrateOutdatedTenants(k, {
      onProgress: (_p, step) => ('error' in step ? reported : done).push(step.tenant.id),
    });
    t.same([migrated, failed.map((f) => f.tenant.id), reported], [2, [tb.tenant.id], [tb.tenant.id]]);
    const e = failed[0].error;
    t.equal(e.code, 'MIGRATION_FAILED');
    t.match(e.statements[0], /add "ean" varchar\(13\) not null/);
    t.ok(e.message.includes('"ean"'), 'names the column');
    t.same([...done].sort(), [ta.tenant.id, tc.tenant.id].sort(), 'A and C were migrated: B failed alone');

    for (const r of [ta, tc]) {
      t.equal(await recordedDigest(k, r.tenant.id), k.digest, `${r.tenant.id} is recorded`);
      t.ok((await columnNames(k, r.tenant.schema, 'catalog_products')).includes('ean'));
    }
    t.same(await snapshot(k, tb.tenant.schema), before, 'B: nothing half-applied, not even the optional field');
    t.equal(await recordedDigest(k, tb.tenant.id), digestBefore);
    await k.tenants.reload();
    t.match(k.tenants.cached(tb.tenant.id)!.migrationError, { code: 'MIGRATION_FAILED', statements: [/add "ean"/] }, 'B is marked');
    t.equal(k.tenants.cached(ta.tenant.id)!.migrationError, null);

    // B answers 503 until it is migrated; A answers
    const app = await buildApp(k, { logger: false });
    t.teardown(() => app.close());
    const login = (tenant: string) => app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant, email: `admin@${tenant}.test`, password: PASSWORD } });
    t.equal((await login(ta.tenant.id)).statusCode, 200);
    const refused = await login(tb.tenant.id);
    t.same([refused.statusCode, refused.json().code], [503, 'TENANT_MIGRATION_FAILED']);
    await t.rejects(migrateTenant(k, tb.tenant), MigrationFailedError, 'a retry before the fix fails again');
    // the operator deals with B's rows, then retries B
    await q(k, `delete from "${tb.tenant.schema}".catalog_products`);
    t.ok((await migrateTenant(k, tb.tenant)) > 0);
    await k.tenants.reload();
    t.equal(k.tenants.cached(tb.tenant.id)!.migrationError, null, 'a migration that succeeds clears the mark');
    t.equal((await login(tb.tenant.id)).statusCode, 200, 'B answers again');
    t.same(await migrateOutdatedTenants(k), { migrated: 0, failed: [], unknownTables: [], plans: 0 }, 'nothing left');
    for (const r of [ta, tb, tc]) t.equal(await recordedDigest(k, r.tenant.id), k.digest);
  });
});

t.test('a change the data does not allow rolls the whole schema back', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  const { tenant, before } = await withKernel(kit, async (k) => {
    const r = await kit.provision(k);
    await addProduct(k, r.tenant, r.companyId, 'P-1'); // attributes is null
    await addProduct(k, r.tenant, r.companyId, 'P-2', { unit: 'hour' });
    return { ...r, before: await snapshot(k, r.tenant.schema) };
  });
  const cases: [string, (m: Json) => void, RegExp][] = [
    [
      'a field made required while rows hold null',
      (m) => {
        product(m).note = { type: 'text' };
        product(m).attributes.required = true;
      },
      /alter column "attributes" set not null/,
    ],
    [
      'an enum value removed while rows use it',
      (m) => {
        product(m).note = { type: 'text' };
        product(m).unit.values = ['piece', 'kg'];
      },
      /add constraint "catalog_products_unit_check"/,
    ],
  ];
  for (const [name, mutate, statement] of cases) {
    await t.test(name, async (t) => {
      kit.edit('catalog.json', mutate);
      t.teardown(() => kit.reset('catalog.json'));
      await withKernel(kit, async (k) => {
        const { failed } = await migrateOutdatedTenants(k);
        t.equal(failed.length, 1);
        t.equal(failed[0].error.code, 'MIGRATION_FAILED');
        t.match(failed[0].error.statements[0], statement);
        const err = await migrateTenant(k, tenant).then(
          () => undefined,
          (e: unknown) => e,
        );
        t.ok(err instanceof MigrationFailedError, String(err));
        t.same(await snapshot(k, tenant.schema), before, 'nothing half-applied');
      });
    });
  }
});

t.test('reading MikroORM scripts', async (t) => {
  t.same(
    splitStatements(`set names 'utf8';\ncreate table "a" ("x" text default 'it''s;\nnot the end');\n\nalter table "s"."t" add "y" int null;\n`),
    [`create table "a" ("x" text default 'it''s;\nnot the end')`, 'alter table "s"."t" add "y" int null'],
    'a ; and a line break inside a string do not end a statement',
  );
  t.same(
    requiredColumnsAdded(`alter table "s"."t" add "a" varchar(13) null, add "b" numeric(12,2) not null, add "c" text not null default 'x, add "d" int not null'`),
    { schema: 's', table: 't', columns: ['b'] },
    'only required columns without a default',
  );
  t.equal(requiredColumnsAdded('alter table "s"."t" add "a" int not null default 0'), undefined);
});
