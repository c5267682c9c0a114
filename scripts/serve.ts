// The server (started by scripts/start.ts): open the kernel, migrate the platform tenant (its operators
// must always get in), create the platform operator and (on an empty database) the demo tenant, listen,
// then migrate the other outdated tenants in the background: the current ones are served at once, the
// others answer 503 TENANT_MIGRATING until theirs is done. SIGTERM and SIGINT stop accepting, finish
// in-flight requests and the tenant migrations under way, and close the databases.
import closeWithGrace from 'close-with-grace';
import { loadConfig } from '../core/config.ts';
import { openKernel } from '../core/kernel.ts';
import { buildApp } from '../core/app.ts';
import { concurrencyFor, migrateTenant, migrationErrorOf, type MigrationProgress } from '../core/tenancy/migrate-tenants.ts';
import { provisionTenant } from '../core/tenancy/provision.ts';
import { PLATFORM_TENANT } from '../core/tenancy/registry.ts';
import { knownLogins, seedDemo } from './seed-demo.ts';
import { banner, describeDatabase, type ReadyFacts } from './banner.ts';
import { describeProgress, ProgressPace, reasonOf, summaryLines } from './migration-report.ts';

const started = performance.now();
const config = loadConfig();
const kernel = await openKernel(config);
const app = await buildApp(kernel);
const log = app.log;

// before listening: whatever else is outdated, platform operators can log in (and retry the tenants that failed)
const platform = await kernel.tenants.find(PLATFORM_TENANT);
if (platform && platform.schemaDigest !== kernel.digest) {
  try {
    log.info({ tenant: PLATFORM_TENANT, applied: await migrateTenant(kernel, platform) }, 'platform tenant migrated');
  } catch (err) {
    const error = migrationErrorOf(err);
    if (!error) throw err;
    // its operators still get in (assertServing), on the schema as it was
    log.error({ tenant: PLATFORM_TENANT, code: error.code, statements: error.statements }, `the platform tenant could not be migrated: ${error.message}`);
  }
}
if (config.platformAdmin && !(await kernel.tenants.find(PLATFORM_TENANT))) {
  await provisionTenant(kernel, { id: PLATFORM_TENANT, name: 'Platform operators', company: { code: 'PLATFORM', name: 'Platform' }, admin: { ...config.platformAdmin, name: 'Platform Operator' } });
  log.info({ email: config.platformAdmin.email }, 'platform operator created');
}
// a person at a terminal reads text (the banner below says what the demo seed made); a log collector reads JSON
const tty = process.stdout.isTTY === true;
const seeded = config.demoData ? await seedDemo(kernel, tty ? () => {} : (msg) => log.info(msg)) : undefined;
// the tenants to migrate in the background, known before the first request arrives
const migrating = await kernel.migrations.prepare();

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'stopping after an error');
  else log.info({ signal }, 'stopping: finishing in-flight requests');
  await app.close();
  await kernel.close();
});

await app.listen({ host: config.host, port: config.port });
if (migrating) {
  log.info(
    { tenants: migrating, concurrency: concurrencyFor(config) },
    `migrating ${migrating} outdated tenant(s) in the background, ${concurrencyFor(config)} at a time: until theirs is done they answer 503 TENANT_MIGRATING`,
  );
}
const pace = new ProgressPace();
const counts = (p: MigrationProgress) => ({ total: p.total, done: p.done, failed: p.failed, remaining: p.remaining, rate: Math.round(p.rate * 100) / 100, etaMs: p.etaMs && Math.round(p.etaMs) });
void kernel.migrations
  .start({
    onProgress: (p, step) => {
      if ('error' in step) {
        const { tenant, error } = step;
        log.error({ tenant: tenant.id, code: error.code, statements: error.statements }, `tenant ${tenant.id} could not be migrated and is unavailable until it is: ${error.message}`);
      }
      if (pace.due(p)) log.info({ migration: counts(p) }, `migrating tenants: ${describeProgress(p)}`);
    },
    onDone: (result, p) => {
      // after the migrations, not beside them: spares of the old modules are dropped and built again
      void refillSpares();
      if (!p.total) return;
      const failed = result.failed.slice(0, 50).map((f) => ({ tenant: f.tenant.id, reason: reasonOf(f) }));
      const unknownTables = result.unknownTables.slice(0, 50).map((u) => ({ tenant: u.tenant.id, tables: u.tables }));
      log[p.failed ? 'warn' : 'info']({ migration: counts(p), plans: result.plans, failed, unknownTables }, `tenant migration finished: ${summaryLines(p, [])[0]}`);
    },
    onStopped: (err, retryInMs) => log.error({ err }, `tenant migration stopped (not a tenant's own failure); it begins again in ${Math.round(retryInMs / 1000)} s`),
  })
  .catch((err: unknown) => log.error({ err }, 'tenant migration failed'));
async function refillSpares(): Promise<void> {
  if (!config.provisionSpares) return;
  try {
    const built = await kernel.spares.refill();
    if (built) log.info({ built }, `${built} spare tenant schema(s) built: the next provisionings take one`);
  } catch (err) {
    log.warn({ err }, 'spare tenant schemas could not be built; provisioning creates each tenant’s tables itself');
  }
}
// events reach subscribers and webhooks, jobs run: here unless WORKERS=false (a process that only serves requests)
if (config.workers) await kernel.startWorkers(log);
// request validators compile on first use; the rest compile now, in the background, between requests
void app.compilePendingValidators().catch((err) => log.error({ err }, 'a route schema does not compile'));
// the port actually bound: PORT=0 asks the system for a free one
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : config.port;
const facts: ReadyFacts = {
  url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
  database: describeDatabase(config),
  modules: kernel.modules.map((m) => m.manifest.id),
  logins: await knownLogins(kernel),
  migrating,
  demoRows: seeded,
  readyMs: Math.round(performance.now() - started),
};
if (tty) {
  // pino writes asynchronously: its lines (Fastify's "listening") go out first, so the banner comes last
  const flushable = log as typeof log & { flush?: (done: () => void) => void };
  if (flushable.flush) await new Promise<void>((done) => flushable.flush!(() => done()));
  process.stdout.write(banner(facts));
}
// no password in a log line, not even the demo's (the README names them)
else log.info({ port, ...facts, logins: facts.logins.map(({ password: _, ...l }) => l) }, `Plinth ready: API docs at ${facts.url}/api-docs`);
