// build(t): a kernel and app on the test database, with tenants of this test
// file's own (random ids), removed again at teardown, so files run in parallel:
// every tenant the kernel created, and a registry schema the file named for itself.
// PostgreSQL: TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
// PGlite: TEST_DB=pglite runs the same tests on an in-memory embedded database.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../core/config.ts';
import { openKernel, type Kernel } from '../core/kernel.ts';
import { buildApp } from '../core/app.ts';
import { provisionTenant } from '../core/tenancy/provision.ts';
import { hashPassword } from '../core/auth/passwords.ts';
import { schemaFor } from '../core/tenancy/registry.ts';
import pg from '../core/db/pg.ts';
import { pgliteSnapshotFile, preparePgliteSnapshot as prepareSnapshot } from './support/pglite-snapshot.ts';

export const onPglite = process.env.TEST_DB === 'pglite';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The cluster a file on PGlite starts from (support/pglite-snapshot.ts), made when missing. */
export const preparePgliteSnapshot = (): Promise<string> => prepareSnapshot(testConfig);

export function testConfig(overrides: Partial<Config> = {}): Config {
  const base = loadConfig({
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
    DATA_DIR: join(tmpdir(), 'plinth-test'),
    PGLITE_MEMORY: 'true',
    PGLITE_SNAPSHOT: onPglite && existsSync(pgliteSnapshotFile()) ? pgliteSnapshotFile() : '',
    LOG_LEVEL: 'silent',
    // every test file's kernel counts requests together with the others' (auth/shared-rate-limits.ts): far above what the suite sends
    RATE_LIMIT_MAX: '10000000',
    DEMO_DATA: 'false',
    // tests that need the event dispatcher and job workers start them (kernel.startWorkers)
    WORKERS: 'false',
    // a scaffolded module's tests can point the kernel at other manifests and plugins
    ...(process.env.MANIFESTS_DIR ? { MANIFESTS_DIR: process.env.MANIFESTS_DIR } : {}),
    ...(process.env.PLUGINS_DIR ? { PLUGINS_DIR: process.env.PLUGINS_DIR } : {}),
    ...(onPglite ? {} : { DATABASE_URL: TEST_DATABASE_URL }),
  });
  // webhook URLs tests make up (https://<random>.example.test) resolve to loopback: no test reaches beyond this machine
  const outbound = { ...base.outbound, lookup: async () => [{ address: '127.0.0.1', family: 4 }] };
  return { ...base, outbound, ...overrides };
}

export const uniqueId = (prefix = 't') => `${prefix}-${randomBytes(5).toString('hex')}`;

export interface TestTenant {
  id: string;
  schema: string;
  companyId: string;
  adminEmail: string;
  adminToken: string;
}

export interface TestContext {
  app: FastifyInstance;
  kernel: Kernel;
  /** Provisions a tenant of this test file and logs its admin in. */
  tenant(opts?: { id?: string }): Promise<TestTenant>;
  /** A user of a tenant holding a role with exactly these permission codes. */
  user(tenant: TestTenant, opts: { codes: string[]; companies?: string[]; role?: string }): Promise<{ id: string; token: string; email: string }>;
  /** An extra company in a tenant; members: user ids to add to it. */
  company(tenant: TestTenant, code: string, members?: string[]): Promise<string>;
  login(tenant: string, email: string, password: string): Promise<LightMyRequestResponse>;
  /** app.inject with a bearer token */
  as(token: string, opts: InjectOptions): Promise<LightMyRequestResponse>;
}

export const PASSWORD = 'correct horse battery staple';

/** Drops schemas over a connection of its own: the kernel that used them is closed. */
async function dropSchemas(url: string, schemas: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

interface Opened {
  kernel: Kernel;
  app: FastifyInstance;
  /** where the tenants the kernel registers from now on are noted (the current file's) */
  noteTenantsIn(tenants: Set<string>): void;
}

async function open(opts: BuildOptions): Promise<Opened> {
  if (onPglite) await preparePgliteSnapshot();
  const kernel = await openKernel(testConfig(opts.config));
  const app = await buildApp(kernel, opts.logger ? { logger: opts.logger } : { logger: false });
  await app.ready();
  // every tenant this kernel registers, however (ctx.tenant, the platform API, provisionTenant), goes at teardown
  let noted = new Set<string>();
  const register = kernel.tenants.register.bind(kernel.tenants);
  kernel.tenants.register = async (row, run) => {
    const created = await register(row, run);
    if (created) noted.add(row.id);
    return created;
  };
  return { kernel, app, noteTenantsIn: (tenants) => (noted = tenants) };
}

/** Drops the tenants a file made: schema, registry row and events. */
async function dropTenants(kernel: Kernel, tenants: Set<string>): Promise<void> {
  const registry = kernel.config.registrySchema;
  for (const id of tenants) {
    // find, not cached: a test may have made the kernel forget a tenant (or dropped it itself)
    const tenant = await kernel.tenants.find(id);
    const conn = kernel.dbs.get(tenant?.connectionKey ?? 'main').em.getConnection();
    await conn.execute(`drop schema if exists "${tenant?.schema ?? schemaFor(id)}" cascade`);
    await conn.execute(`delete from "${registry}".tenants where id = ?`, [id]);
    await conn.execute(`delete from "${registry}".events where tenant_id = ?`, [id]);
    // a shared kernel goes on serving: it must not find the tenant in its cache
    kernel.tenants.forget(id);
  }
  tenants.clear();
}

// In a test worker (support/worker/run.ts) the files it runs one after another share
// one kernel and app, opened by the first build(t) without options: a file pays for
// its tenants, not for a kernel. A file that changes what a kernel is (config, logger,
// workers) builds its own; the shared one refuses to start workers or close.
let sharing = false;
let shared: Promise<Opened> | undefined;
const SHARED_REFUSES = new Set(['startWorkers', 'close']);

/** From now on build(t) without options shares one kernel (a test worker; not inherited by child processes). */
export function shareKernel(): void {
  sharing = true;
}

/** Closes the worker's shared kernel (support/worker/run.ts, after its last file). */
export async function closeSharedKernel(): Promise<void> {
  // a kernel that failed to open failed every file that shared it already
  const opened = await shared?.catch(() => undefined);
  shared = undefined;
  if (!opened) return;
  await opened.app.close();
  await opened.kernel.close();
}

/** The shared app listens once: a file asking again gets the address it already listens on. */
function listensOnce(opened: Opened): Opened {
  const { app } = opened;
  const listen = app.listen.bind(app) as (opts: object) => Promise<string>;
  let address: Promise<string> | undefined;
  app.listen = ((opts: object) => (address ??= listen(opts))) as typeof app.listen;
  return opened;
}

function guarded(kernel: Kernel): Kernel {
  return new Proxy(kernel, {
    get(target, key, receiver) {
      if (typeof key === 'string' && SHARED_REFUSES.has(key)) {
        return () => {
          throw new Error(`the kernel is shared by the files of this test worker: kernel.${key}() needs build(t, { own: true })`);
        };
      }
      return Reflect.get(target, key, receiver);
    },
  });
}

export interface BuildOptions {
  config?: Partial<Config>;
  logger?: Record<string, unknown>;
  /** a kernel of this file's own, even in a test worker (it starts workers, closes it, or counts what it does) */
  own?: boolean;
}

export async function build(t: Teardown, opts: BuildOptions = {}): Promise<TestContext> {
  const own = !sharing || opts.own || opts.config !== undefined || opts.logger !== undefined;
  const opened = own ? await open(opts) : await (shared ??= open({}).then(listensOnce));
  const { app } = opened;
  const kernel = own ? opened.kernel : guarded(opened.kernel);
  const tenants = new Set<string>();
  opened.noteTenantsIn(tenants);
  t.teardown(async () => {
    if (!own) return dropTenants(kernel, tenants);
    await app.close();
    await dropTenants(kernel, tenants);
    const registry = kernel.config.registrySchema;
    // spares a test built (only those of a registry of its own: another file may be taking the shared one's)
    if (registry !== testConfig().registrySchema) await kernel.spares.dropAll();
    await kernel.close();
    // a registry of the file's own (not the default every file shares) goes too, with its job
    // queues, once nothing of the kernel runs on it
    if (!onPglite && registry !== testConfig().registrySchema) await dropSchemas(kernel.config.databases.main, [registry, `${registry}_jobs`]);
  });

  const login = (tenant: string, email: string, password: string) => app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant, email, password } });
  const tokenOf = async (tenant: string, email: string) => {
    const res = await login(tenant, email, PASSWORD);
    if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
    return res.json().accessToken as string;
  };
  const emOf = (tenantId: string) => {
    const tenant = kernel.tenants.cached(tenantId)!;
    return kernel.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema });
  };

  return {
    app,
    kernel,
    login,
    async tenant(o = {}) {
      const id = o.id ?? uniqueId();
      tenants.add(id);
      const adminEmail = `admin@${id}.test`;
      const r = await provisionTenant(kernel, { id, name: `Tenant ${id}`, company: { code: 'HQ', name: 'Headquarters' }, admin: { email: adminEmail, name: 'Admin', password: PASSWORD } });
      return { id, schema: r.tenant.schema, companyId: r.companyId, adminEmail, adminToken: await tokenOf(id, adminEmail) };
    },
    async user(tenant, o) {
      const em = emOf(tenant.id);
      const E = (n: string) => kernel.model(n).ormEntity;
      const email = `${uniqueId('u')}@${tenant.id}.test`;
      const role = em.create(E('Role'), { name: o.role ?? uniqueId('role'), permissions: o.codes, builtIn: false } as never) as { id: string };
      const user = em.create(E('User'), {
        email,
        name: email,
        passwordHash: await hashPassword(PASSWORD),
        isActive: true,
        primaryCompanyId: (o.companies ?? [tenant.companyId])[0] ?? null,
      } as never) as { id: string };
      em.create(E('UserRole'), { userId: user.id, roleId: role.id } as never);
      for (const companyId of o.companies ?? [tenant.companyId]) em.create(E('UserCompany'), { userId: user.id, companyId } as never);
      await em.flush();
      // roles were written behind the kernel's back: drop its cached role codes and memberships
      app.abilities.invalidate(tenant.id);
      kernel.memberships.invalidate(tenant.id);
      return { id: user.id, email, token: await tokenOf(tenant.id, email) };
    },
    async company(tenant, code, members = []) {
      const em = emOf(tenant.id);
      const E = (n: string) => kernel.model(n).ormEntity;
      const company = em.create(E('Company'), { code, name: { en: `Company ${code}` }, isActive: true } as never) as { id: string };
      for (const userId of members) em.create(E('UserCompany'), { userId, companyId: company.id } as never);
      await em.flush();
      // memberships written behind the kernel's back
      kernel.memberships.invalidate(tenant.id);
      return company.id;
    },
    as(token, o) {
      return app.inject({ ...o, headers: { authorization: `Bearer ${token}`, ...(o.headers ?? {}) } });
    },
  };
}
