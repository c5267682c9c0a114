// The kernel's capability behind BI data sources (ctx.externalDb): which
// targets it refuses (loopback, private, link-local by literal and by what a
// name resolves to, every connection; unless allowed by configuration), that a
// query cannot write however it tries, its statement timeout and row cap, its
// clear errors (auth, database, schema, unreachable, TLS) and its bounded pool.
import t from 'tap';
import { ExternalDatabases, ExternalDbError, parseTarget, type ExternalDbErrorCode } from '../../../core/db/external-db.ts';
import { externalDbConfig, type ExternalDbConfig } from '../../../core/config.ts';
import { externalDatabase, SERVER, skipWithout } from './external-fixture.ts';

const fixture = await externalDatabase(t);
const skip = skipWithout(fixture);
const url = fixture?.url ?? '';
const TENANT = 'ext-test';

function databases(config: Partial<ExternalDbConfig> = {}): ExternalDatabases {
  const dbs = new ExternalDatabases({ ...externalDbConfig({}), ...config });
  t.teardown(() => dbs.close());
  return dbs;
}
const local = databases({ allowPrivate: true });
const on = (dbs: ExternalDatabases, target = url) => dbs.of(TENANT, { url: target, sslMode: 'disable' });
const describe = (dbs: ExternalDatabases, target = url, schema = 'sales') => on(dbs, target).describe(schema, { timeoutMs: 5000, maxTables: 100 });
const query = (sql: string, values: unknown[] = [], opts = { timeoutMs: 5000, maxRows: 100 }) => on(local).query(sql, values, opts);

async function refusedWith(t: Tap, p: Promise<unknown>, code: ExternalDbErrorCode, what: string) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof ExternalDbError, `${what}: an ExternalDbError`);
  t.equal((err as ExternalDbError).code, code, what);
  return err as ExternalDbError;
}
type Tap = Pick<typeof t, 'ok' | 'equal' | 'match' | 'notMatch'>;

t.test('URLs: only postgres://user@host:port/database, never a password in it', async (t) => {
  t.same(parseTarget({ url: 'postgres://reader@db.example.com:6543/warehouse' }), {
    host: 'db.example.com',
    port: 6543,
    database: 'warehouse',
    user: 'reader',
    password: undefined,
    ssl: 'require',
  });
  t.equal(parseTarget({ url: 'postgresql://r@h/d?sslmode=verify-full' }).ssl, 'verify-full');
  t.equal(parseTarget({ url: 'postgresql://r@h/d?sslmode=verify-full', sslMode: 'disable' }).ssl, 'disable', 'the field wins over the URL');
  t.equal(parseTarget({ url: 'postgres://r@[::1]:5432/d' }).host, '::1');
  for (const bad of [
    'http://r@h/d',
    'postgres://r:secret@h/d',
    'postgres://h/d',
    'postgres://r@h',
    'postgres://r@h/d?host=/var/run/postgresql',
    'postgres://r@h/d?sslmode=prefer',
    'postgres://r@h/d/e',
    'postgres://r@h_x!/d',
    'postgres://r%zz@h/d',
    'not a url',
  ]) {
    t.throws(() => parseTarget({ url: bad }), { code: 'INVALID_TARGET' }, bad);
  }
});

t.test('refused targets without the allow setting', { skip }, async (t) => {
  const strict = databases({ allowPrivate: false });
  for (const target of [
    `postgres://postgres@${SERVER}/postgres`,
    'postgres://postgres@[::1]:5432/postgres',
    'postgres://postgres@10.1.2.3:5432/postgres',
    'postgres://postgres@169.254.169.254:5432/postgres',
    'postgres://postgres@localhost:5432/postgres',
    // the system resolver reads a bare number as an IPv4 address: judged by what it resolves to
    'postgres://postgres@2130706433:5432/postgres',
  ]) {
    const err = await refusedWith(t, describe(strict, target), 'REFUSED_TARGET', target);
    t.notMatch(err.message, /password/);
  }
  // a name that answers with a public and a private address (DNS rebinding): refused on every connection
  const rebinding = databases({ allowPrivate: false, lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
  await refusedWith(t, describe(rebinding, 'postgres://postgres@db.example.test:5432/postgres'), 'REFUSED_TARGET', 'a name resolving to loopback');
  // the same with the allow setting connects
  const allowed = await describe(local);
  t.ok(allowed.tables.length > 0);
});

t.test('an allow-list lets named private hosts and ranges through, and only those', { skip }, async (t) => {
  const byRange = databases({ allowPrivate: false, allowHosts: ['127.0.0.0/8'] });
  t.ok((await describe(byRange)).tables.length, 'a CIDR range');
  const byName = databases({ allowPrivate: false, allowHosts: ['localhost'] });
  t.ok((await describe(byName, url.replace('127.0.0.1', 'localhost'))).tables.length, 'a host name');
  await refusedWith(t, describe(byName), 'REFUSED_TARGET', 'an address not listed');
  const other = databases({ allowPrivate: false, allowHosts: ['10.0.0.0/8', 'warehouse.internal'] });
  await refusedWith(t, describe(other), 'REFUSED_TARGET', 'other ranges');
});

t.test('clear errors: database, user, schema, unreachable, TLS', { skip }, async (t) => {
  await refusedWith(t, describe(local, `postgres://postgres@${SERVER}/no_such_database_x`), 'NO_DATABASE', 'a database that does not exist');
  await refusedWith(t, describe(local, `postgres://no_such_role_x@${SERVER}/postgres`), 'AUTH_FAILED', 'a user that does not exist');
  await refusedWith(t, describe(local, url, 'no_such_schema'), 'NO_SCHEMA', 'a schema that does not exist');
  await refusedWith(t, describe(local, 'postgres://postgres@127.0.0.1:1/postgres'), 'UNREACHABLE', 'a port nobody listens on');
  await refusedWith(t, describe(databases({ allowPrivate: true, lookup: async () => [] }), 'postgres://postgres@nowhere.example.test/x'), 'UNREACHABLE', 'a name without an address');
  const tls = local.of(TENANT, { url, sslMode: 'require' });
  const err = await tls.describe('sales', { timeoutMs: 5000, maxTables: 10 }).then(
    () => null,
    (e: unknown) => e as ExternalDbError,
  );
  // the local server may or may not speak TLS: either it works, or it is a TLS failure
  if (err) t.equal(err.code, 'TLS_FAILED', 'TLS refused by the server');
  else t.pass('the server speaks TLS');
});

t.test('introspection: the schema asked for, tables and views with their columns', { skip }, async (t) => {
  const schema = await describe(local);
  t.match(schema.serverVersion, /^\d+/);
  t.same(
    schema.tables.map((x) => [x.name, x.kind]),
    [
      ['big_orders', 'view'],
      ['numbers', 'table'],
      ['orders', 'table'],
      ['slow', 'view'],
    ],
    'the schema "sales" only (not public.elsewhere), by name',
  );
  const orders = schema.tables.find((x) => x.name === 'orders')!;
  t.equal(orders.description, 'Orders of the shop');
  t.same(
    orders.columns.map((c) => [c.name, c.type, c.nullable]),
    [
      ['id', 'int4', false],
      ['customer', 'text', false],
      ['region', 'region', true],
      ['amount', 'numeric', true],
      ['quantity', 'int4', false],
      ['ordered_on', 'date', false],
      ['shipped_at', 'timestamptz', true],
      ['paid', 'bool', false],
      ['notes', 'jsonb', true],
      ['Odd Name', 'text', true],
    ],
  );
  t.same(orders.columns.find((c) => c.name === 'region')!.values, ['north', 'south', 'east'], "an enum's labels in order");
  t.equal(orders.columns.find((c) => c.name === 'amount')!.scale, 2);
  const capped = await on(local).describe('sales', { timeoutMs: 5000, maxTables: 2 });
  t.same(
    capped.tables.map((x) => x.name),
    ['big_orders', 'numbers'],
  );
  t.equal(capped.truncated, true);
});

t.test('read-only: a query cannot write, however it tries', { skip }, async (t) => {
  const before = await fixture!.sql('select sum(quantity)::int as q, count(*)::int as n from sales.orders');
  for (const [sql, code] of [
    ['delete from sales.orders returning id', 'QUERY_FAILED'],
    ['select 1) x; delete from sales.orders; select * from (select 1', 'QUERY_FAILED'],
    ['with d as (delete from sales.orders returning id) select * from d', 'QUERY_FAILED'],
    ['select sales.touch()', 'READ_ONLY'],
    ["select nextval('sales.orders_id_seq')", 'READ_ONLY'],
    ['select 1 as x from sales.orders for update', 'READ_ONLY'],
    ['select * from (select 1) y) z; commit; insert into sales.numbers values (0); select * from (select 1', 'QUERY_FAILED'],
  ] as const) {
    await refusedWith(t, query(sql), code, sql);
  }
  // a setting changed by one statement dies with its transaction: the next is read-only again
  t.same((await query("select set_config('default_transaction_read_only', 'off', false) as v")).rows, [{ v: 'off' }]);
  await refusedWith(t, query('select sales.touch()'), 'READ_ONLY', 'still read-only afterwards');
  t.same(await fixture!.sql('select sum(quantity)::int as q, count(*)::int as n from sales.orders'), before, 'nothing changed');
});

t.test('values are bound, every value comes back as text, with the row cap and the timeout', { skip }, async (t) => {
  const r = await query('select customer, amount, paid, ordered_on from sales.orders where customer = $1 order by id', ["O'Brien'); drop table sales.orders; --"]);
  t.same(r.rows, [{ customer: "O'Brien'); drop table sales.orders; --", amount: '10.00', paid: 'f', ordered_on: '2026-05-05' }]);
  t.same(
    r.columns.map((c) => c.name),
    ['customer', 'amount', 'paid', 'ordered_on'],
  );
  const capped = await query('select n from sales.numbers order by n', [], { timeoutMs: 5000, maxRows: 7 });
  t.equal(capped.rows.length, 7);
  t.equal(capped.truncated, true);
  t.same(
    capped.rows.map((x) => x.n),
    ['1', '2', '3', '4', '5', '6', '7'],
  );
  t.equal((await query('select n from sales.numbers', [], { timeoutMs: 5000, maxRows: 50 })).truncated, false);
  // the kernel's own cap wins over a larger one asked for
  const kernelCap = databases({ allowPrivate: true, maxRows: 5 });
  t.equal((await on(kernelCap).query('select n from sales.numbers', [], { timeoutMs: 5000, maxRows: 1000 })).rows.length, 5);
  const started = Date.now();
  await refusedWith(t, query('select count(*) from sales.slow', [], { timeoutMs: 300, maxRows: 10 }), 'TIMEOUT', 'a statement longer than its timeout');
  t.ok(Date.now() - started < 5000, 'stopped at the timeout');
  t.same((await query('select 1 as one')).rows, [{ one: '1' }], 'the pooled connection still serves');
});

t.test('a source holds a few connections, however many queries run at once', { skip }, async (t) => {
  const dbs = databases({ allowPrivate: true, poolSize: 2 });
  const db = dbs.of('pool-test', { url, sslMode: 'disable' });
  const pids = await Promise.all(Array.from({ length: 8 }, async () => (await db.query('select pg_backend_pid() as pid from pg_sleep(0.05)', [], { timeoutMs: 5000, maxRows: 1 })).rows[0].pid));
  t.ok(new Set(pids).size <= 2, `8 queries at once on at most 2 connections (${new Set(pids).size})`);
  // another tenant with the very same credentials gets connections of its own
  const other = dbs.of('pool-test-2', { url, sslMode: 'disable' });
  const theirs = (await other.query('select pg_backend_pid() as pid', [], { timeoutMs: 5000, maxRows: 1 })).rows[0].pid;
  t.notOk(pids.includes(theirs), "no connection shared with another tenant's");
  await dbs.close();
});

t.test('configuration: EXTERNAL_DB_* settings', async (t) => {
  t.same(externalDbConfig({}), { allowPrivate: false, allowHosts: [], connectTimeoutMs: 5000, timeoutMs: 30000, maxRows: 10000, poolSize: 2, idleMs: 10000, maxPools: 50 });
  const c = externalDbConfig({ EXTERNAL_DB_ALLOW_PRIVATE: 'true', EXTERNAL_DB_ALLOW_HOSTS: ' Warehouse.Internal , 10.0.0.0/8', EXTERNAL_DB_POOL_SIZE: '3' });
  t.equal(c.allowPrivate, true);
  t.same(c.allowHosts, ['warehouse.internal', '10.0.0.0/8']);
  t.equal(c.poolSize, 3);
});
