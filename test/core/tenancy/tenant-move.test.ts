// Moving a tenant to another database under write load: every acknowledged write
// is on the target afterwards, no request gets a 5xx other than the 503 that asks
// a held write to retry, rows and checksums match on both sides, the registry
// points at the target, and late writes to the source are refused, not lost.
import t from 'tap';
import { buildApp } from '../../../core/app.ts';
import pg from '../../../core/db/pg.ts';
import { moveTenant, dropMovedSource } from '../../../core/tenancy/move.ts';
import { TenantError } from '../../../core/tenancy/errors.ts';
import { kernelKit, randomId } from '../../fixtures/kernels.ts';
import { secondDatabase } from '../../fixtures/second-database.ts';
import { onPglite, PASSWORD, TEST_DATABASE_URL } from '../../helper.ts';

t.test('a tenant moves between databases under write load', { skip: onPglite && 'embedded PGlite is one database: a move needs two PostgreSQL databases' }, async (t) => {
  const second = await secondDatabase(t);
  const kit = await kernelKit(t);
  const kernel = await kit.open({ databases: { main: TEST_DATABASE_URL, second: second.url } });
  const app = await buildApp(kernel, { logger: false });
  const { tenant } = await kit.provision(kernel, randomId('mv'));
  const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: tenant.id, email: `admin@${tenant.id}.test`, password: PASSWORD } });
  const auth = { authorization: `Bearer ${login.json().accessToken}` };
  const create = (sku: string) => app.inject({ method: 'POST', url: '/api/products', headers: auth, payload: { sku, name: `Product ${sku}`, price: '9.90', currency: 'EUR', attributes: { n: sku } } });
  for (let i = 0; i < 30; i++) t.equal((await create(`BEFORE-${i}`)).statusCode, 201);

  await t.test('refusals: no such tenant, no such database, where it is already', async (t) => {
    for (const [id, to, code] of [
      ['no-such-tenant', 'second', 'UNKNOWN_TENANT'],
      [tenant.id, 'nowhere', 'UNKNOWN_CONNECTION'],
      [tenant.id, 'main', 'SAME_CONNECTION'],
    ] as const) {
      const err = await moveTenant(kernel, id, to).then(
        () => undefined,
        (e: unknown) => e,
      );
      t.ok(err instanceof TenantError && err.code === code, code);
    }
  });

  await t.test('a move cut before the switch leaves the tenant where it was, and no copy behind', async (t) => {
    const watcher = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await watcher.connect();
    t.teardown(() => watcher.end());
    // the source session holding the tenant's tables ends while it copies them
    let ended = false;
    const cut = (async () => {
      for (let i = 0; i < 400 && !ended; i++) {
        const { rows } = await watcher.query(`select pid from pg_stat_activity where query like 'select coalesce(json_agg(t)%' and pid <> pg_backend_pid()`);
        if (rows[0]) ended = (await watcher.query('select pg_terminate_backend($1) as ok', [rows[0].pid])).rows[0].ok;
        else await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const err = await moveTenant(kernel, tenant.id, 'second', { batch: 1 }).then(
      () => undefined,
      (e: Error) => e,
    );
    await cut;
    t.ok(ended && err, 'the move failed when its source connection ended');
    await kernel.tenants.reload();
    t.equal(kernel.tenants.cached(tenant.id)!.connectionKey, 'main', 'the registry still points at the source');
    t.notOk(await second.hasSchema(tenant.schema), 'the copy is gone from the target');
    t.equal((await create('AFTER-CUT')).statusCode, 201, 'and the tenant takes writes where it is');
  });

  await t.test('the move, with writes before, during and after it', async (t) => {
    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    let writing = true;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; writing || i < 5; i++) {
        const sku = `W${w}-${i}`;
        const res = await create(sku);
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 201) acknowledged.push(sku);
        else if (res.statusCode === 503) t.match(res.headers['retry-after'], /^\d+$/, 'a held write is told when to retry');
      }
    });
    await new Promise((r) => setTimeout(r, 150));
    const result = await moveTenant(kernel, tenant.id, 'second', { batch: 7 });
    await new Promise((r) => setTimeout(r, 150));
    writing = false;
    await Promise.all(writers);

    t.same([result.from, result.to], ['main', 'second']);
    t.ok(result.writesHeldMs >= 0 && result.writesHeldMs <= result.totalMs, `writes held ${result.writesHeldMs} ms of ${result.totalMs} ms`);
    const products = result.tables.find((x) => x.table === kernel.model('Product').table)!;
    t.ok(products.rows >= 30, `products copied: ${products.rows}, counted and checksummed on both sides`);
    t.notOk(
      [...statuses.keys()].some((s) => s >= 500 && s !== 503),
      `no 5xx but 503: ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    t.ok(acknowledged.length > 0, `${acknowledged.length} writes acknowledged meanwhile`);

    await kernel.tenants.reload();
    t.equal(kernel.tenants.cached(tenant.id)!.connectionKey, 'second', 'the registry points at the target');
    const skus = new Set((await second.query(`select sku from "${tenant.schema}"."${kernel.model('Product').table}"`)).map((r) => r.sku as string));
    const lost = [...acknowledged, 'AFTER-CUT', ...Array.from({ length: 30 }, (_, i) => `BEFORE-${i}`)].filter((s) => !skus.has(s));
    t.same(lost, [], 'every acknowledged write is on the target');
    const list = await app.inject({ method: 'GET', url: '/api/products?size=1', headers: auth });
    t.same([list.statusCode, list.json().total], [200, skus.size], 'the API reads from the target');

    // a statement-level trigger: it fires for any write, even one that touches no row
    const late = await kernel.dbs.main.em
      .getConnection()
      .execute(`delete from "${tenant.schema}"."${kernel.model('Product').table}" where false`)
      .then(
        () => undefined,
        (e: Error & { code?: string }) => e,
      );
    t.match(late, { code: '57P03', message: /moved to another database/ }, 'a late write to the source is refused (57P03: answered 503 with Retry-After)');

    t.rejects(moveTenant(kernel, tenant.id, 'main'), { code: 'TARGET_EXISTS' }, 'moving back finds the left-over source schema');
    await dropMovedSource(kernel, tenant.id, 'main');
    const back = await moveTenant(kernel, tenant.id, 'main');
    t.equal(back.to, 'main', 'and moves back once it is dropped');
    t.equal((await app.inject({ method: 'GET', url: '/api/products?size=1', headers: auth })).json().total, skus.size, 'with every row');
    await dropMovedSource(kernel, tenant.id, 'second');
    t.notOk(await second.hasSchema(tenant.schema));
  });

  await t.test('writes go on while the rows are copied; the catch-up brings over what they changed', async (t) => {
    const products = kernel.model('Product').table;
    const list = (await app.inject({ method: 'GET', url: '/api/products?size=100&sort=sku', headers: auth })).json().items as { id: string; sku: string; version: number }[];
    const [changed, removed] = [list.find((p) => p.sku === 'BEFORE-2')!, list.find((p) => p.sku === 'BEFORE-3')!];
    const during: number[] = [];
    const result = await moveTenant(kernel, tenant.id, 'second', {
      batch: 5,
      onCopied: async (table) => {
        if (table !== products || during.length) return;
        // the products are copied: these change the source after the snapshot, and none waits for the move
        during.push((await create('DURING-COPY')).statusCode);
        during.push(
          (await app.inject({ method: 'PATCH', url: `/api/products/${changed.id}`, headers: { ...auth, 'if-match': `"${changed.version}"` }, payload: { name: 'Changed during the copy' } }))
            .statusCode,
        );
        during.push((await app.inject({ method: 'DELETE', url: `/api/products/${removed.id}`, headers: { ...auth, 'if-match': `"${removed.version}"` } })).statusCode);
      },
    });
    t.same(during, [201, 200, 204], 'a create, an update and a delete during the copy were served at once');
    t.equal(result.to, 'second');
    const rows = await second.query(`select sku, name->>'en' as name from "${tenant.schema}"."${products}" where sku in ('DURING-COPY', 'BEFORE-2', 'BEFORE-3') order by sku`);
    t.same(
      rows.map((r) => [r.sku, r.name]),
      [
        ['BEFORE-2', 'Changed during the copy'],
        ['DURING-COPY', 'Product DURING-COPY'],
      ],
      'the target holds the created and changed rows, not the deleted one',
    );
    t.ok(result.writesHeldMs <= result.totalMs, `writes held ${result.writesHeldMs} ms of ${result.totalMs} ms`);
    await dropMovedSource(kernel, tenant.id, 'main');
  });

  await t.test('two rows swap their unique SKUs during the copy: the catch-up copies the tenant again whole', async (t) => {
    const products = kernel.model('Product').table;
    const list = (await app.inject({ method: 'GET', url: '/api/products?size=100&sort=sku', headers: auth })).json().items as { id: string; sku: string; version: number }[];
    const [a, b] = [list.find((p) => p.sku === 'BEFORE-4')!, list.find((p) => p.sku === 'BEFORE-5')!];
    const patch = (id: string, version: number, sku: string) => app.inject({ method: 'PATCH', url: `/api/products/${id}`, headers: { ...auth, 'if-match': `"${version}"` }, payload: { sku } });
    const swapped: number[] = [];
    const result = await moveTenant(kernel, tenant.id, 'main', {
      onCopied: async (table) => {
        if (table !== products || swapped.length) return;
        // A takes a free SKU, B takes A's, A takes B's: the snapshot holds both the other way round
        swapped.push((await patch(a.id, a.version, 'SWAP-TMP')).statusCode);
        swapped.push((await patch(b.id, b.version, 'BEFORE-4')).statusCode);
        swapped.push((await patch(a.id, a.version + 1, 'BEFORE-5')).statusCode);
      },
    });
    t.same(swapped, [200, 200, 200], 'the swap was served during the copy');
    t.equal(result.catchUp, 'copied-again', 'the row-by-row catch-up met the swapped SKU and the tenant was copied again');
    const rows = (await kernel.dbs.main.em.getConnection().execute(`select id, sku from "${tenant.schema}"."${products}" where id in (?, ?)`, [a.id, b.id])) as { id: string; sku: string }[];
    t.same(Object.fromEntries(rows.map((r) => [r.id, r.sku])), { [a.id]: 'BEFORE-5', [b.id]: 'BEFORE-4' }, 'the target holds the swapped SKUs');
    await dropMovedSource(kernel, tenant.id, 'second');
  });

  await t.test('a long transaction on a table of the tenant: the move lets the writes queued behind it go and asks again', async (t) => {
    const products = kernel.model('Product').table;
    const blocker = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await blocker.connect();
    t.teardown(() => blocker.end());
    const block = async () => {
      await blocker.query('begin');
      await blocker.query(`lock table "${tenant.schema}"."${products}" in row exclusive mode`);
    };

    // held through every attempt: the move gives up, and the tenant stays where it is
    await block();
    const retries: string[] = [];
    const err = await moveTenant(kernel, tenant.id, 'second', { lockTimeoutMs: 100, lockAttempts: 2, onLockRetry: (_, reason) => retries.push(reason) }).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    t.match(err, { code: '55P03' }, 'the move failed for want of its lock');
    t.same(retries, ['no lock within 100 ms'], 'after asking twice');
    await kernel.tenants.reload();
    t.equal(kernel.tenants.cached(tenant.id)!.connectionKey, 'main', 'the registry still points at the source');
    t.notOk(await second.hasSchema(tenant.schema), 'the copy is gone from the target');
    await blocker.query('rollback');

    // held through the first attempts only
    await block();
    const result = await moveTenant(kernel, tenant.id, 'second', { lockTimeoutMs: 100, lockAttempts: 5, onLockRetry: () => void blocker.query('rollback') });
    t.equal(result.lockAttempts, 2, 'moved at the second attempt, once the transaction ended');
    t.equal(result.to, 'second');
    await dropMovedSource(kernel, tenant.id, 'main');
  });

  await app.close();
  await kernel.close();
});
