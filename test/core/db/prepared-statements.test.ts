// Named prepared statements per pooled connection (core/db/prepared-statements.ts),
// on real PostgreSQL: what the backend holds is read from pg_prepared_statements.
// A statement is prepared when its text repeats, one-off texts and statements
// without values never are, the least recently used go past the capacity, and a
// plan whose table changed is prepared again (outside a transaction, unnoticed).
import t, { type Test } from 'tap';
import pg, { type Client, type LanePgClient } from '../../../core/db/pg.ts';
import { prepareStatements } from '../../../core/db/prepared-statements.ts';
import { onPglite, TEST_DATABASE_URL, uniqueId } from '../../helper.ts';

async function connect(t: Test, capacity: number) {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  t.teardown(() => client.end());
  prepareStatements(client as unknown as LanePgClient, capacity);
  const held = async () => (await client.query('select statement from pg_prepared_statements order by prepare_time')).rows.map((r) => r.statement as string);
  return { client, held };
}

const one = async (client: Client, sql: string, values: unknown[]) => (await client.query(sql, values)).rows[0];

t.test('prepared statements', { skip: onPglite && 'embedded PGlite has no pool of its own connections' }, async (t) => {
  t.test('a text is prepared the second time it runs, and runs prepared after', async (t) => {
    const { client, held } = await connect(t, 10);
    const sql = 'select $1::int + 1 as n';
    t.same(await one(client, sql, [1]), { n: 2 });
    t.same(await held(), [], 'seen once: not prepared');
    t.same(await one(client, sql, [2]), { n: 3 });
    t.same(await held(), [sql], 'seen twice: prepared');
    t.same(await one(client, sql, [41]), { n: 42 });
    t.same(await held(), [sql], 'and reused, not prepared again');
  });

  t.test('statements without values run as they are: several in one text too', async (t) => {
    const { client, held } = await connect(t, 10);
    for (let i = 0; i < 3; i++) await client.query('select 1; select 2');
    for (let i = 0; i < 3; i++) await client.query('select 3', []);
    t.same(await held(), []);
  });

  t.test('past the capacity the least recently used is deallocated', async (t) => {
    const { client, held } = await connect(t, 2);
    const sql = (n: number) => `select $1::int as n${n}`;
    for (const n of [1, 2, 1, 3]) for (let i = 0; i < 2; i++) t.same(await one(client, sql(n), [n]), { [`n${n}`]: n });
    t.same((await held()).sort(), [sql(1), sql(3)], '2 was used least recently');
    for (let i = 0; i < 2; i++) t.same(await one(client, sql(2), [7]), { n2: 7 }, 'and runs again when it comes back');
    t.same((await held()).sort(), [sql(2), sql(3)]);
  });

  t.test('capacity 0 prepares nothing', async (t) => {
    const { client, held } = await connect(t, 0);
    for (let i = 0; i < 3; i++) await client.query('select $1::int', [i]);
    t.same(await held(), []);
  });

  t.test("a table's columns change under a prepared statement: outside a transaction it is prepared again", async (t) => {
    const { client, held } = await connect(t, 10);
    const table = `"${uniqueId('prep')}"`;
    await client.query(`create table ${table} (id int primary key)`);
    t.teardown(() => client.query(`drop table if exists ${table}`));
    await client.query(`insert into ${table} values (1)`);
    const sql = `select * from ${table} where id = $1`;
    for (let i = 0; i < 2; i++) t.same(await one(client, sql, [1]), { id: 1 });
    await client.query(`alter table ${table} add column label text default 'x'`);
    t.same(await one(client, sql, [1]), { id: 1, label: 'x' }, 'the new column is there, with no error');
    t.same(await one(client, sql, [1]), { id: 1, label: 'x' });
    t.equal((await held()).filter((s) => s === sql).length, 1, 'prepared again');

    await client.query(`alter table ${table} add column more int default 5`);
    await client.query('begin');
    const err = await client.query(sql, [1]).catch((e: Error) => e);
    t.match(err, { message: /cached plan must not change result type/ }, 'inside a transaction the transaction has failed');
    await client.query('rollback');
    t.same(await one(client, sql, [1]), { id: 1, label: 'x', more: 5 }, 'and the next run prepares it again');
    t.equal((await held()).filter((s) => s === sql).length, 1, 'held once');
  });

  t.test('a statement that fails to parse is not taken for prepared; eviction in a failed transaction does not break it', async (t) => {
    const { client, held } = await connect(t, 1);
    for (let i = 0; i < 2; i++) t.match(await client.query('select $1::int frm nowhere', [1]).catch((e: Error) => e), { message: /syntax error/ });
    t.same(await held(), []);
    const sql = (n: number) => `select $1::int as m${n}`;
    for (let i = 0; i < 2; i++) await client.query(sql(1), [1]);
    await client.query('begin');
    await client.query('select 1/0').catch(() => {});
    // the third text's preparing evicts the first while the transaction has failed: both fail as any statement there does
    for (let i = 0; i < 2; i++) t.match(await client.query(sql(2), [2]).catch((e: Error) => e), { message: /current transaction is aborted/ });
    await client.query('rollback');
    for (let i = 0; i < 2; i++) t.same(await one(client, sql(2), [2]), { m2: 2 }, 'after the rollback it runs and is prepared');
    t.same(
      (await held()).filter((s) => s === sql(2)),
      [sql(2)],
    );
    t.same(await one(client, 'select $1::int as ok', [1]), { ok: 1 }, 'the connection is sound');
  });
});
