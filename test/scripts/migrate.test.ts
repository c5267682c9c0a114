// npm run migrate and the server's start as a person (or a log collector) sees
// them: progress as a line every tenth of the way or every few seconds (one
// line rewritten in place on a terminal), each failed tenant with its reason,
// a closing summary; and a start that migrates the platform tenant before it
// listens and the other outdated tenants after, in the background.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Kernel } from '../../core/kernel.ts';
import type { MigrationProgress } from '../../core/tenancy/migrate-tenants.ts';
import type { Tenant } from '../../core/tenancy/registry.ts';
import { describeProgress, duration, ProgressPace, summaryLines } from '../../scripts/migration-report.ts';
import { CORE_AND_CATALOG, kernelKit, randomId, type KernelKit } from '../fixtures/kernels.ts';
import { onPglite, PASSWORD, TEST_DATABASE_URL } from '../helper.ts';

const progress = (done: number, total: number, failed = 0, elapsedMs = 2000): MigrationProgress => {
  const rate = done / (elapsedMs / 1000);
  return { total, done, failed, migrated: done - failed, remaining: total - done, elapsedMs, rate, etaMs: done ? ((total - done) / rate) * 1000 : null };
};

t.test('a progress line: counts, rate and time to go', async (t) => {
  t.equal(describeProgress(progress(120, 1000, 2, 4000)), '120/1000 tenants (2 failed), 880 left, 30 tenants/s, about 29 s to go');
  t.equal(describeProgress(progress(0, 10)), '0/10 tenants, 10 left, 0.0 tenants/s');
  t.equal(duration(1234), '1.2 s');
  t.equal(duration(200_000), '3 min 20 s');
  t.equal(duration(3_900_000), '1 h 05 min');
  const summary = summaryLines(progress(3, 4, 1), [
    {
      tenant: { id: 'acme', schema: 'tenant_acme' } as Tenant,
      error: { code: 'MIGRATION_FAILED', message: 'migrating schema "tenant_acme" failed\n  alter table …', statements: [], at: '' },
    },
  ]);
  t.same(summary, [
    'migrated 2 tenant(s), 1 failed, in 2.0 s (1.5 tenants/s)',
    '1 not begun: run it again to migrate them',
    '  failed: acme (tenant_acme) MIGRATION_FAILED: migrating schema "tenant_acme" failed',
  ]);
  t.same(summaryLines(progress(0, 0), []), ['every tenant is up to date']);
});

t.test('progress lines are paced: every tenth of the way or every few seconds, not one per tenant', async (t) => {
  let now = 0;
  const pace = new ProgressPace(5000, () => now);
  const due: number[] = [];
  for (let done = 1; done <= 10_000; done++) {
    now += 10; // a tenant every 10 ms: 100 s in all
    if (pace.due({ done, total: 10_000 })) due.push(done);
  }
  t.equal(due[0], 1, 'the first tenant');
  t.equal(due.at(-1), 10_000, 'the last one');
  t.ok(due.includes(1000) && due.includes(5000), 'each tenth');
  t.ok(due.length >= 20 && due.length <= 35, `${due.length} lines for 10,000 tenants`);
});

/** The environment of a child process on this kit's database and registry. */
function childEnv(t: { teardown(fn: () => void): void }, kit: KernelKit, more: Record<string, string> = {}): NodeJS.ProcessEnv {
  const dataDir = onPglite ? kit.config.dataDir : mkdtempSync(join(tmpdir(), 'plinth-migrate-'));
  if (!onPglite) t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    ...(onPglite ? {} : { DATABASE_URL: TEST_DATABASE_URL }),
    REGISTRY_SCHEMA: kit.config.registrySchema,
    MANIFESTS_DIR: kit.manifestsDir,
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
    DEMO_DATA: 'false',
    WORKERS: 'false',
    PROVISION_SPARES: '0',
    PASSWORD_SCRYPT_COST: '1024',
    ...more,
  };
}

async function run(t: { teardown(fn: () => void): void }, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(join(process.cwd(), 'node_modules/.bin/node'), args, { env, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stdout, stderr };
}

/** Outdated tenants (their recorded digest is another), the first `broken` of them with a column the migrator will not narrow back. */
async function outdatedTenants(kit: KernelKit, n: number, broken: number): Promise<Tenant[]> {
  const k: Kernel = await kit.open();
  try {
    const tag = randomId('cli');
    const tenants: Tenant[] = [];
    for (let i = 0; i < n; i++) tenants.push((await kit.provision(k, `${tag}-${i}`)).tenant);
    for (const tenant of tenants) await k.tenants.setDigest(tenant.id, 'an-older-digest');
    for (const tenant of tenants.slice(0, broken)) await k.dbs.main.em.getConnection().execute(`alter table "${tenant.schema}".catalog_products alter column sku type text`);
    return tenants;
  } finally {
    await k.close();
  }
}

t.test('npm run migrate: progress lines, each failure with its reason, a summary, exit 1 while a tenant failed', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  const [broken, ...fine] = await outdatedTenants(kit, 3, 1);
  const env = childEnv(t, kit, { MIGRATE_CONCURRENCY: '2' });
  const first = await run(t, ['scripts/migrate.ts'], env);
  t.equal(first.code, 1, 'a tenant failed: exit 1');
  const out = first.stdout.split('\n');
  t.equal(out[0], 'migrating 3 tenant(s), 2 at a time');
  t.ok(
    out.some((l) => /^migrating: 1\/3 tenants/.test(l)),
    'a progress line',
  );
  t.ok(
    out.some((l) => /^migrating: 3\/3 tenants \(1 failed\), 0 left, [\d.]+ tenants\/s$/.test(l)),
    'the last one, counts and rate',
  );
  t.notMatch(first.stdout, '\r', 'no line rewritten in place without a terminal');
  t.match(first.stdout, /^migrated 2 tenant\(s\), 1 failed, in [\d.]+ s \([\d.]+ tenants\/s\)$/m, 'the summary');
  t.match(first.stdout, new RegExp(`^  failed: ${broken.id} \\(${broken.schema}\\) DESTRUCTIVE_MIGRATION: refusing to migrate`, 'm'), 'the failed tenant and why');
  t.match(first.stderr, new RegExp(`^${broken.id} \\(${broken.schema}\\) FAILED DESTRUCTIVE_MIGRATION`, 'm'), 'the failure as it happened');
  t.match(first.stderr, '1 tenant(s) failed; fix their data or the modules, then run npm run migrate again');
  t.notMatch(first.stdout + first.stderr, fine[0].id, 'no line per migrated tenant');

  // on a terminal: the same line, rewritten; the broken tenant is still outdated and fails again
  const again = await run(t, ['--import', 'data:text/javascript,process.stdout.isTTY=true', 'scripts/migrate.ts'], env);
  t.equal(again.code, 1);
  t.ok(again.stdout.includes('\r\x1b[2Kmigrating: 1/1 tenants (1 failed), 0 left'), 'one line, rewritten in place (carriage return, erase line)');
  t.match(again.stdout, /^migrated 0 tenant\(s\), 1 failed/m);
});

t.test('npm start migrates the platform tenant before it listens and the others after, in the background', async (t) => {
  const kit = await kernelKit(t, { persistent: true, modules: CORE_AND_CATALOG });
  const k = await kit.open();
  const platform = (await kit.provision(k, 'platform')).tenant;
  const tag = randomId('srv');
  const others = [(await kit.provision(k, `${tag}-a`)).tenant, (await kit.provision(k, `${tag}-b`)).tenant];
  await k.close();
  // a module change since: every tenant is outdated
  kit.edit('catalog.json', (m) => {
    m.entities.find((e: { name: string }) => e.name === 'Product').fields.ean = { type: 'string', maxLength: 13 };
  });
  const env = childEnv(t, kit, { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', MIGRATE_CONCURRENCY: '1' });
  const child = spawn(join(process.cwd(), 'node_modules/.bin/node'), ['scripts/start.ts'], { env, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  type Line = { msg: string; [key: string]: any };
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  const finished = await new Promise<boolean>((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (lines().some((l) => l.msg.startsWith('tenant migration finished'))) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  if (!finished) return t.fail(`the background migration did not finish: ${stderr}${stdout}`);
  const all = lines();
  const at = (test: (l: Line) => boolean) => all.findIndex(test);
  const platformMigrated = at((l) => l.msg === 'platform tenant migrated' && l.tenant === 'platform');
  const listening = at((l) => l.msg.startsWith('Server listening'));
  const background = at((l) => l.msg.startsWith('migrating 2 outdated tenant(s) in the background'));
  const firstProgress = at((l) => l.msg.startsWith('migrating tenants: 1/2 tenants'));
  t.ok(platformMigrated >= 0 && platformMigrated < listening, 'the platform tenant is migrated before the server listens');
  t.ok(listening < background && background < firstProgress, 'the other tenants after');
  t.match(
    all.find((l) => l.msg.startsWith('Plinth ready')),
    { migrating: 2 },
    'the ready line counts them',
  );
  t.match(
    all.find((l) => l.msg.startsWith('tenant migration finished')),
    { migration: { total: 2, done: 2, failed: 0, remaining: 0 } },
  );

  const ready = all.find((l) => l.msg.startsWith('Plinth ready'))!;
  const base = `http://127.0.0.1:${ready.port}`;
  const login = (tenant: string) =>
    fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tenant, email: `admin@${tenant}.test`, password: PASSWORD }) });
  t.equal((await login(platform.id)).status, 200, 'operators get in');
  for (const tenant of others) t.equal((await login(tenant.id)).status, 200, `${tenant.id} is served once migrated`);
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exits 0');
  t.equal(stderr.trim(), '', 'nothing on stderr');

  const after = await kit.open();
  try {
    t.same(await after.tenants.outdated(after.digest), [], 'every tenant is current');
  } finally {
    await after.close();
  }
});
