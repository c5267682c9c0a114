// Benchmark data through the kernel's own code: tenants come from
// provisionTenant (timed: that is the provisioning figure), rows from multi-row
// INSERTs of the kernel's ORM (em.insertMany). Everything is reused when present:
// tenant "bench" with 10,000 products, and tenants "bench-s0001"… for scale runs.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { loadConfig } from '../core/config.ts';
import { openKernel, type Kernel } from '../core/kernel.ts';
import { provisionTenant } from '../core/tenancy/provision.ts';
import { migrateTenant } from '../core/tenancy/migrate-tenants.ts';
import { TokenService } from '../core/auth/tokens.ts';
import { hashPassword } from '../core/auth/passwords.ts';
import pg from './pg.ts';

export const BENCH_TENANT = 'bench';
export const SCALE_PREFIX = 'bench-s';
export const SAMPLE_PREFIX = 'bench-p-';
/** SKUs the write scenarios create; removed after every write run. */
export const WRITE_SKU_PREFIX = 'BW-';
const MANAGER_ROLE = 'bench-manager';
export const SEARCH_TERMS = ['drill', 'valve', 'cable', 'pump'];
const PROBE_NAME = 'Zz bench probe';

type Row = Record<string, any>;

export interface BenchTenant {
  id: string;
  schema: string;
  companyId: string;
  /** the caller: a catalog manager (role with erp:catalog:manage) or the admin */
  userId: string;
  roles: string[];
  token: string;
  productIds: string[];
  categoryIds: string[];
  /** a product outside the first page and every search: the write check patches it */
  patchProbeId?: string;
  /** ms, when this run provisioned the tenant */
  provisionMs?: number;
}

/** Creates the database of a URL when it does not exist (the bench may have one of its own). */
export async function ensureDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  u.pathname = '/postgres';
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    const { rows } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rows.length) await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

export function benchKernel(databaseUrl: string, jwtSecret: string, root: string, env: Record<string, string> = {}): Promise<Kernel> {
  return openKernel(
    loadConfig({
      ...env,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: jwtSecret,
      LOG_LEVEL: 'silent',
      DEMO_DATA: 'false',
      DATA_DIR: join(tmpdir(), 'plinth-bench'),
      MANIFESTS_DIR: join(root, 'manifests'),
      PLUGINS_DIR: join(root, 'plugins'),
    }),
  );
}

// deterministic data: the same 10,000 products on every machine
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const ADJ = ['Compact', 'Heavy', 'Silent', 'Rapid', 'Precise', 'Rugged', 'Smart', 'Classic', 'Mini', 'Pro', 'Eco', 'Turbo', 'Flex', 'Steel', 'Nano', 'Ultra', 'Prime', 'Solid', 'Swift', 'Grand'];
const NOUN = [
  'drill',
  'hammer',
  'valve',
  'cable',
  'pump',
  'saw',
  'wrench',
  'ladder',
  'lamp',
  'socket',
  'hose',
  'clamp',
  'sander',
  'router',
  'filter',
  'gauge',
  'switch',
  'bracket',
  'nozzle',
  'grinder',
];
const NOUN_DE = [
  'Bohrer',
  'Hammer',
  'Ventil',
  'Kabel',
  'Pumpe',
  'Säge',
  'Schlüssel',
  'Leiter',
  'Lampe',
  'Steckdose',
  'Schlauch',
  'Zwinge',
  'Schleifer',
  'Fräse',
  'Filter',
  'Messer',
  'Schalter',
  'Halter',
  'Düse',
  'Schleifer',
];
const UNITS = ['piece', 'kg', 'litre', 'metre', 'hour'];

function products(n: number, companyId: string, categoryIds: string[], seed: number): Row[] {
  const rnd = prng(seed);
  const at = new Date('2026-01-15T08:00:00.000Z');
  return Array.from({ length: n }, (_, i) => {
    const a = Math.floor(rnd() * ADJ.length),
      k = Math.floor(rnd() * NOUN.length);
    const probe = i === n - 1;
    const name: Row = probe ? { en: PROBE_NAME } : { en: `${ADJ[a]} ${NOUN[k]} ${String(i).padStart(5, '0')}` };
    if (!probe && i % 3 === 0) name.de = `${ADJ[a]} ${NOUN_DE[k]} ${String(i).padStart(5, '0')}`;
    return {
      id: uuidv7(),
      companyId,
      sku: `BENCH-${String(i).padStart(5, '0')}`,
      name,
      description: probe ? { en: 'Reserved for the benchmark write check.' } : { en: `A ${ADJ[a].toLowerCase()} ${NOUN[k]} for workshop and site use.` },
      price: (1 + rnd() * 999).toFixed(2),
      currency: 'EUR',
      unit: UNITS[i % UNITS.length],
      stock: Math.floor(rnd() * 500),
      categoryId: categoryIds.length ? categoryIds[i % categoryIds.length] : null,
      isActive: i % 10 !== 0,
      availableFrom: i % 4 === 0 ? '2026-02-01' : null,
      discontinuedAt: null,
      attributes: i % 2 === 0 ? { color: ['red', 'blue', 'black'][i % 3], weightKg: (i % 40) / 4 } : null,
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
  });
}

let managerHash: Promise<string> | undefined;
const emOf = (kernel: Kernel, schema: string) => kernel.dbs.main.em.fork({ schema });
const E = (kernel: Kernel, name: string) => kernel.model(name).ormEntity;

/** Provisions (timed) unless present, then makes sure of the caller, categories and products. */
export async function ensureTenant(
  kernel: Kernel,
  tokens: TokenService,
  id: string,
  opts: { products: number; categories: number; as: 'manager' | 'admin'; log?: (m: string) => void },
): Promise<BenchTenant> {
  let provisionMs: number | undefined;
  const admin = { email: `admin@${id}.bench.test`, name: 'Bench Admin', password: 'bench-password-not-secret' };
  if (!(await kernel.tenants.find(id))) {
    const t0 = performance.now();
    await provisionTenant(kernel, { id, name: `Bench ${id}`, company: { code: 'HQ', name: 'Bench HQ' }, admin });
    provisionMs = performance.now() - t0;
  }
  const tenant = (await kernel.tenants.find(id))!;
  // modules changed since an earlier run: migrate here, not in the server's start-up
  if (tenant.schemaDigest !== kernel.digest) await migrateTenant(kernel, tenant);
  const em = emOf(kernel, tenant.schema);
  const company = (await em.findOne(E(kernel, 'Company'), { code: 'HQ' })) as Row;
  let user = (await em.findOne(E(kernel, 'User'), { email: admin.email })) as Row;
  let roles = ['admin'];
  if (opts.as === 'manager') {
    const email = `manager@${id}.bench.test`;
    roles = [MANAGER_ROLE];
    const role =
      ((await em.findOne(E(kernel, 'Role'), { name: MANAGER_ROLE })) as Row) ??
      (em.create(E(kernel, 'Role'), { name: MANAGER_ROLE, description: 'benchmark caller', permissions: ['erp:catalog:manage'], builtIn: false } as never) as Row);
    user = (await em.findOne(E(kernel, 'User'), { email })) as Row;
    if (!user) {
      user = em.create(E(kernel, 'User'), {
        email,
        name: 'Bench Manager',
        passwordHash: await (managerHash ??= hashPassword(admin.password)),
        isActive: true,
        primaryCompanyId: company.id,
      } as never) as Row;
      em.create(E(kernel, 'UserRole'), { userId: user.id, roleId: role.id } as never);
      em.create(E(kernel, 'UserCompany'), { userId: user.id, companyId: company.id } as never);
    }
    await em.flush();
  }
  const Category = E(kernel, 'Category');
  const Product = E(kernel, 'Product');
  let categoryIds = ((await em.find(Category, { companyId: company.id }, { orderBy: { id: 'asc' } })) as Row[]).map((c) => c.id as string);
  if (categoryIds.length < opts.categories) {
    const at = new Date('2026-01-15T08:00:00.000Z');
    await em.insertMany(
      Category,
      Array.from({ length: opts.categories - categoryIds.length }, (_, i) => ({
        id: uuidv7(),
        companyId: company.id,
        name: { en: `Category ${i}` },
        isActive: true,
        createdAt: at,
        updatedAt: at,
        version: 1,
      })) as never,
    );
    categoryIds = ((await em.find(Category, { companyId: company.id }, { orderBy: { id: 'asc' } })) as Row[]).map((c) => c.id as string);
  }
  const conn = em.getConnection();
  const table = `"${tenant.schema}"."${kernel.model('Product').table}"`;
  await conn.execute(`delete from ${table} where sku like '${WRITE_SKU_PREFIX}%'`);
  const [{ n, seeded }] = (await conn.execute(`select count(*)::int as n, count(*) filter (where sku like 'BENCH-%')::int as seeded from ${table}`)) as { n: number; seeded: number }[];
  if (n !== opts.products || seeded !== opts.products) {
    opts.log?.(`seeding ${opts.products} products in tenant ${id}`);
    await conn.execute(`delete from ${table}`);
    const rows = products(opts.products, company.id, categoryIds, 42);
    for (let i = 0; i < rows.length; i += 1000) await em.insertMany(Product, rows.slice(i, i + 1000) as never);
  }
  // fresh statistics and no dead rows from earlier write runs: the same plans on every run
  if (opts.products >= 1000) await conn.execute(`vacuum analyze ${table}`);
  const productRows = (await conn.execute(`select id, name->>'en' as name from ${table} order by sku`)) as { id: string; name: string }[];
  const token = tokens.signAccess({ sub: user.id, tid: id });
  return {
    id,
    schema: tenant.schema,
    companyId: company.id,
    userId: user.id,
    roles,
    token,
    categoryIds,
    provisionMs,
    productIds: productRows.filter((p) => p.name !== PROBE_NAME).map((p) => p.id),
    patchProbeId: productRows.find((p) => p.name === PROBE_NAME)?.id,
  };
}

/**
 * Removes what the write scenarios created, so every run reads the same 10,000 rows: the products, and the
 * tenant's outbox rows, receipts and jobs (a server with workers would otherwise dispatch every earlier run's
 * events, and the outbox's pending index would grow from run to run). Call it with no server running.
 */
export async function removeWrites(kernel: Kernel, t: BenchTenant): Promise<void> {
  const conn = emOf(kernel, t.schema).getConnection();
  const table = `"${t.schema}"."${kernel.model('Product').table}"`;
  await conn.execute(`delete from ${table} where sku like '${WRITE_SKU_PREFIX}%'`);
  // the probe's stock back to 0, so the next probe PATCH changes it (an unchanged value writes nothing)
  if (t.patchProbeId) await conn.execute(`update ${table} set stock = 0 where id = ?`, [t.patchProbeId]);
  await removeEvents(kernel, t);
}

/** The tenant's outbox rows, their receipts and the tenant's jobs (pg-boss groups jobs by tenant). */
async function removeEvents(kernel: Kernel, t: BenchTenant): Promise<void> {
  const conn = kernel.dbs.main.em.getConnection();
  const { outbox } = kernel;
  await conn.execute(`delete from ${outbox.receiptTable} where event_id in (select id from ${outbox.table} where tenant_id = ?)`, [t.id]);
  const [{ n }] = (await conn.execute(`with d as (delete from ${outbox.table} where tenant_id = ? returning 1) select count(*)::int as n from d`, [t.id])) as { n: number }[];
  await conn.execute(`delete from "${kernel.config.registrySchema}_jobs".job where group_id = ?`, [t.id]);
  // many deleted rows: vacuumed now rather than by autovacuum during the next measurement
  if (n > 1000) await conn.execute(`vacuum analyze ${outbox.table}`);
}

/** Outbox rows of the tenant (the write scenarios check that EVENTS=off records none). */
export async function countEvents(kernel: Kernel, t: BenchTenant): Promise<number> {
  const [{ n }] = (await kernel.dbs.main.em.getConnection().execute(`select count(*)::int as n from ${kernel.outbox.table} where tenant_id = ?`, [t.id])) as { n: number }[];
  return n;
}

/** An access token of the tenant's admin (webhooks are admin-only). */
export async function adminToken(kernel: Kernel, tokens: TokenService, t: BenchTenant): Promise<string> {
  const user = (await emOf(kernel, t.schema).findOne(E(kernel, 'User'), { email: `admin@${t.id}.bench.test` })) as Row;
  if (!user) throw new Error(`tenant ${t.id} has no bench admin`);
  return tokens.signAccess({ sub: user.id, tid: t.id });
}

export async function dropTenant(kernel: Kernel, id: string): Promise<void> {
  const tenant = kernel.tenants.cached(id) ?? (await kernel.tenants.find(id));
  if (!tenant) return;
  const conn = kernel.dbs.get(tenant.connectionKey).em.getConnection();
  await conn.execute(`drop schema if exists "${tenant.schema}" cascade`);
  await conn.execute('delete from platform.tenants where id = ?', [id]);
  kernel.tenants.forget(id);
}

export const isBenchTenant = (id: string) => id === BENCH_TENANT || id.startsWith('bench-');

/** --cleanup: every tenant this benchmark created, and nothing else. */
export async function cleanup(kernel: Kernel, log: (m: string) => void): Promise<number> {
  await kernel.tenants.reload();
  const ids = kernel.tenants
    .list()
    .map((t) => t.id)
    .filter(isBenchTenant);
  for (const id of ids) await dropTenant(kernel, id);
  log(`removed ${ids.length} bench tenants`);
  return ids.length;
}

const scaleTenantId = (i: number) => `${SCALE_PREFIX}${String(i).padStart(4, '0')}`;

/**
 * The scale tenants 1..n, provisioned where missing, `concurrency` at once (10,000
 * one by one take most of an hour); how many were provisioned now comes back too.
 */
export async function ensureScaleTenants(
  kernel: Kernel,
  tokens: TokenService,
  n: number,
  opts: { concurrency: number; as: 'manager' | 'admin'; log?: (m: string) => void },
): Promise<{ tenants: BenchTenant[]; provisioned: number }> {
  const tenants: BenchTenant[] = new Array(n);
  let next = 0;
  let ready = 0;
  let provisioned = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const t = await ensureTenant(kernel, tokens, scaleTenantId(i + 1), { products: 5, categories: 0, as: opts.as });
      if (t.provisionMs !== undefined) provisioned++;
      tenants[i] = t;
      if (++ready % 500 === 0) opts.log?.(`  ${ready}/${n} tenants ready (${provisioned} provisioned now)`);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return { tenants, provisioned };
}

export const newTokens = (secret: string) => new TokenService(secret, 6 * 3600, 3600);
