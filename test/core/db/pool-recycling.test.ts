// Pooled PostgreSQL connections are recycled by use and by age: a backend keeps the
// catalog entries of every table it touched, so one serving many tenants grows
// until it is closed (DB_CONNECTION_MAX_USES, DB_CONNECTION_MAX_AGE_SECONDS).
import t from 'tap';
import { openKernel } from '../../../core/kernel.ts';
import { onPglite, testConfig } from '../../helper.ts';

t.test('a pooled connection is replaced after its uses and after its age', { skip: onPglite && 'embedded PGlite has no pool: one in-process connection' }, async (t) => {
  const pids = async (kernel: Awaited<ReturnType<typeof openKernel>>, n: number, pauseMs = 0) => {
    const seen: number[] = [];
    for (let i = 0; i < n; i++) {
      const [row] = (await kernel.dbs.main.em.getConnection().execute('select pg_backend_pid() as pid')) as { pid: number }[];
      seen.push(row.pid);
      if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
    }
    return seen;
  };

  await t.test('by uses', async (t) => {
    const kernel = await openKernel(testConfig({ poolSize: 1, dbConnectionMaxUses: 3 }));
    t.teardown(() => kernel.close());
    const seen = await pids(kernel, 9);
    // the first backend may have served the kernel's own start-up queries already
    const runs = seen.reduce<number[]>((acc, pid, i) => (i && pid === seen[i - 1] ? [...acc.slice(0, -1), acc.at(-1)! + 1] : [...acc, 1]), []);
    t.ok(
      runs.every((n) => n <= 3),
      `never more than three uses on one backend (${runs.join(', ')})`,
    );
    t.ok(
      runs.slice(1, -1).every((n) => n === 3),
      'each backend between the first and the last served exactly three',
    );
    t.ok(new Set(seen).size >= 3, 'then a new one, each time');
  });

  await t.test('by age', async (t) => {
    const kernel = await openKernel(testConfig({ poolSize: 1, dbConnectionMaxAgeSeconds: 1 }));
    t.teardown(() => kernel.close());
    const [first] = await pids(kernel, 1);
    await new Promise((r) => setTimeout(r, 1300));
    const [later] = await pids(kernel, 1);
    t.not(later, first, 'a connection older than its age is closed, and the next use opens another');
  });

  await t.test('pooled connections say whose they are', async (t) => {
    const kernel = await openKernel(testConfig({ poolSize: 1 }));
    t.teardown(() => kernel.close());
    const [row] = (await kernel.dbs.main.em.getConnection().execute(`select current_setting('application_name') as name`)) as { name: string }[];
    t.equal(row.name, process.env.PGAPPNAME || 'plinth', "pg_stat_activity shows them as 'plinth' (or PGAPPNAME)");
  });

  await t.test('defaults', async (t) => {
    const config = testConfig();
    t.same([config.dbConnectionMaxUses, config.dbConnectionMaxAgeSeconds], [1_000_000, 1800]);
  });
});
