// The server (started by scripts/start.ts): open the kernel, migrate outdated tenants, create the platform
// operator and (on an empty database) the demo tenant, then serve. SIGTERM and
// SIGINT stop accepting, finish in-flight requests and close the databases.
import closeWithGrace from 'close-with-grace';
import { loadConfig } from '../core/config.ts';
import { openKernel } from '../core/kernel.ts';
import { buildApp } from '../core/app.ts';
import { migrateOutdatedTenants } from '../core/tenancy/migrate-tenants.ts';
import { provisionTenant } from '../core/tenancy/provision.ts';
import { PLATFORM_TENANT } from '../core/tenancy/registry.ts';
import { knownLogins, seedDemo } from './seed-demo.ts';
import { banner, describeDatabase, type ReadyFacts } from './banner.ts';

const started = performance.now();
const config = loadConfig();
const kernel = await openKernel(config);
const app = await buildApp(kernel);
const log = app.log;

// a tenant whose schema cannot take the change is marked (503 TENANT_MIGRATION_FAILED) and the rest are served
const { migrated } = await migrateOutdatedTenants(
  kernel,
  (done, total, t, applied) => log.info({ tenant: t.id, applied }, `migrated tenant ${done}/${total}`),
  ({ tenant, error }) => log.error({ tenant: tenant.id, code: error.code, statements: error.statements }, `tenant ${tenant.id} could not be migrated and is unavailable until it is: ${error.message}`),
);
if (config.platformAdmin && !(await kernel.tenants.find(PLATFORM_TENANT))) {
  await provisionTenant(kernel, { id: PLATFORM_TENANT, name: 'Platform operators', company: { code: 'PLATFORM', name: 'Platform' }, admin: { ...config.platformAdmin, name: 'Platform Operator' } });
  log.info({ email: config.platformAdmin.email }, 'platform operator created');
}
// a person at a terminal reads text (the banner below says what the demo seed made); a log collector reads JSON
const tty = process.stdout.isTTY === true;
const seeded = config.demoData ? await seedDemo(kernel, tty ? () => {} : (msg) => log.info(msg)) : undefined;

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'stopping after an error');
  else log.info({ signal }, 'stopping: finishing in-flight requests');
  await app.close();
  await kernel.close();
});

await app.listen({ host: config.host, port: config.port });
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
  migrated,
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
