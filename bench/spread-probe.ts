// Where a GET by id spends its CPU, one tenant against N (the scale bench's spread): Plinth's
// process and its PostgreSQL backends, in ms of CPU per request, read from /proc (so run it on
// the database's machine). It found that at 10,000 tenants PostgreSQL does 4-8x the work per
// request (README, "Tenancy at scale").
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/plinth_bench node bench/spread-probe.ts
// N tenants (1000; provisioned when missing, like the bench's, PROVISION_CONCURRENCY at once: 4), DUR and WARM seconds (8, 5),
// ORDER of the runs (single,spread,single,spread), VARIANTS: a JSON object of server
// environments to compare ({"norecycle":{"DB_CONNECTION_MAX_USES":"1000000000"}}), PROF=1 to
// CPU-profile each variant's server into /tmp/prof-<variant> (node bench/profile-summary.ts).
// Keep DB_CONNECTION_MAX_USES high when the backends' CPU matters: a recycled backend's is lost.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from './pg.ts';
import { benchKernel, ensureScaleTenants, ensureTenant, newTokens, BENCH_TENANT } from './fixtures.ts';
import { ROOT, freePort, startServer } from './servers.ts';
import { runLoad } from './load.ts';
import { spreadSetups } from './scenarios.ts';

const URL_ = process.env.DATABASE_URL!;
const N = Number(process.env.N ?? 1000);
const DUR = Number(process.env.DUR ?? 8);
const WARM = Number(process.env.WARM ?? 5);
const variants = JSON.parse(process.env.VARIANTS ?? '{"default":{}}') as Record<string, Record<string, string>>;
const secret = randomBytes(32).toString('hex');
const kernel = await benchKernel(URL_, secret, ROOT);
const tokens = newTokens(secret);
const bench = await ensureTenant(kernel, tokens, BENCH_TENANT, { products: 10_000, categories: 20, as: 'manager' });
const { tenants } = await ensureScaleTenants(kernel, tokens, N, { concurrency: Number(process.env.PROVISION_CONCURRENCY ?? 4), as: 'manager', log: console.log });
await kernel.close();
const ticks = (pid: number) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
};
const admin = new pg.Client({ connectionString: URL_ });
await admin.connect();
// every backend of the database but this one and the LISTEN connection: run nothing else on it meanwhile
const backends = async () =>
  (await admin.query(`select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid() and query not like 'listen%'`)).rows.map(
    (r) => r.pid as number,
  );
const setups = spreadSetups(bench, tenants);
for (const [vname, extra] of Object.entries(variants)) {
  const profDir = process.env.PROF ? `/tmp/prof-${vname}` : '';
  const server = await startServer('probe', [...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), 'scripts/start.ts'], {
    PATH: process.env.PATH!,
    HOME: process.env.HOME!,
    DATABASE_URL: URL_,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    JWT_SECRET: secret,
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000000',
    DEMO_DATA: 'false',
    DB_POOL_SIZE: '10',
    WORKERS: 'false',
    ...extra,
  });
  try {
    for (const name of (process.env.ORDER ?? 'single,spread,single,spread').split(',') as ('single' | 'spread')[]) {
      await runLoad({ url: server.url, connections: 50, duration: WARM, setup: setups[name] });
      const pids = await backends();
      const n0 = ticks(server.pid);
      const p0 = pids.map(ticks);
      const r = await runLoad({ url: server.url, connections: 50, duration: DUR, setup: setups[name] });
      const n1 = ticks(server.pid);
      const pids1 = await backends();
      const pgTicks = pids.reduce((s, pid, i) => s + ticks(pid) - p0[i], 0);
      const msPer = (t: number) => ((t * 10) / r.requests).toFixed(3);
      console.log(
        `${vname} ${name}: ${r.rps} req/s, node ${msPer(n1 - n0)} ms/req, pg ${msPer(pgTicks)} ms/req (backends ${pids.length}→${pids1.length}, same ${pids1.filter((p) => pids.includes(p)).length}) non2xx ${r.non2xx}`,
      );
    }
  } finally {
    await server.stop();
  }
}
await admin.end();
