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
import { seedDemo } from './seed-demo.ts';

const started = performance.now();
const config = loadConfig();
const kernel = await openKernel(config);
const app = await buildApp(kernel);
const log = app.log;

const { migrated } = await migrateOutdatedTenants(kernel, (done, total, t, applied) => log.info({ tenant: t.id, applied }, `migrated tenant ${done}/${total}`));
if (config.platformAdmin && !(await kernel.tenants.find(PLATFORM_TENANT))) {
  await provisionTenant(kernel, { id: PLATFORM_TENANT, name: 'Platform operators', company: { code: 'PLATFORM', name: 'Platform' }, admin: { ...config.platformAdmin, name: 'Platform Operator' } });
  log.info({ email: config.platformAdmin.email }, 'platform operator created');
}
if (config.demoData) await seedDemo(kernel, (msg) => log.info(msg));

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'stopping after an error');
  else log.info({ signal }, 'stopping: finishing in-flight requests');
  await app.close();
  await kernel.close();
});

await app.listen({ host: config.host, port: config.port });
// events reach subscribers and webhooks, jobs run: here unless WORKERS=false (a process that only serves requests)
if (config.workers) await kernel.startWorkers(log);
// the port actually bound: PORT=0 asks the system for a free one
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : config.port;
log.info(
  {
    port,
    database: kernel.dbs.embedded ? `embedded PGlite (${config.pgliteInMemory ? 'memory' : config.dataDir})` : 'PostgreSQL',
    modules: kernel.modules.map((m) => m.manifest.id),
    migrated,
    readyMs: Math.round(performance.now() - started),
  },
  `Plinth ready: API docs at http://${config.host}:${port}/api-docs`,
);
