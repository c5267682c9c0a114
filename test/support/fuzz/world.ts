// What a fuzz file runs against: two tenants, companies the admin belongs to and
// one they do not, callers of every kind (admin, read-only, no role, another
// tenant, forged and missing tokens, a platform operator where needed) and real
// rows of every entity in each place, made through the API (dataset.ts).
// A file that fuzzes the platform area provisions the reserved platform tenant;
// on PostgreSQL it does that in a database of its own, so no other test file
// ever sees it or the tenants the fuzz provisions.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Test } from 'tap';
import { build, onPglite, PASSWORD, TEST_DATABASE_URL, uniqueId, type TestContext, type TestTenant } from '../../helper.ts';
import { provisionTenant } from '../../../core/tenancy/provision.ts';
import { PLATFORM_TENANT } from '../../../core/tenancy/registry.ts';
import { loadApi, type Api } from '../api/describe.ts';
import { buildDataset, type DataRow, type Dataset } from '../api/dataset.ts';
import { newMarker } from '../api/examples.ts';
import { forgedTokens } from '../api/tokens.ts';
import { ResponseWatch } from '../api/responses.ts';

export type Caller = 'admin' | 'viewer' | 'noRole' | 'none' | 'forged' | 'otherTenant' | 'operator';

export interface World {
  ctx: TestContext;
  api: Api;
  /** every 2xx answer of the world and the fuzz, held to the document */
  answers: ResponseWatch;
  a: TestTenant;
  b: TestTenant;
  /** a company of tenant a the admin belongs to besides the primary one, and one they do not */
  second: string;
  foreign: string;
  tokens: Record<Exclude<Caller, 'forged'>, string | undefined>;
  /** Authorization header values that must not authenticate: forged tokens, malformed schemes */
  forged: string[];
  /** rows the admin may use (primary company); the fuzz adds what it creates and drops what it deletes */
  pool: Map<string, DataRow[]>;
  /** rows of the same entity the admin must not reach by default: the second company's, tenant b's */
  elsewhere: Map<string, string[]>;
  /** text markers of each tenant's rows: neither ever shows in an answer to the other */
  markers: { a: string; b: string };
  /** tenants the operator may suspend and resume: this file's own */
  tenantIds: string[];
  /** a tenant's live refresh tokens, for the refresh and logout routes */
  refreshTokens: string[];
  credentials: Array<{ tenant: string; email: string; password: string }>;
  /** logs a caller in again (a logout revokes their access tokens at once) */
  renew(caller: Caller): Promise<void>;
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
}
// pg ships no types of its own: the little used here, typed by hand
const pg = createRequire(import.meta.url)('pg') as { Client: new (o: { connectionString: string }) => PgClient };

async function ownDatabase(): Promise<string> {
  const name = `plinth_fuzz_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.href;
}

async function dropDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop database if exists ${new URL(url).pathname.slice(1)} with (force)`);
  } finally {
    await client.end();
  }
}

export async function buildWorld(t: Test, o: { operator: boolean; seed: number }): Promise<World> {
  const url = o.operator && !onPglite ? await ownDatabase() : undefined;
  // the helper's teardown (closing the kernel) first, then the database goes
  const later: Array<() => unknown> = [];
  t.teardown(async () => {
    for (const fn of later) await fn();
    if (url) await dropDatabase(url);
  });
  const ctx = await build({ teardown: (fn) => later.push(fn) }, url ? { config: { databases: { main: url } } } : {});
  const api = await loadApi(ctx.app, ctx.kernel);
  const answers = new ResponseWatch(api).watch(ctx.app);
  const a = await ctx.tenant();
  const b = await ctx.tenant();
  const adminId = (await ctx.as(a.adminToken, { method: 'GET', url: '/api/auth/me' })).json().id as string;
  const second = await ctx.company(a, 'C2', [adminId]);
  const foreign = await ctx.company(a, 'C3');
  const admin = (await ctx.login(a.id, a.adminEmail, PASSWORD)).json().accessToken as string; // now lists C2 too
  const readOnly = [...ctx.kernel.permissions.codes.values()].filter((p) => p.grants.every((g) => [g.action].flat().every((x) => x === 'read'))).map((p) => p.code);
  const viewer = await ctx.user(a, { codes: readOnly });
  const bare = await ctx.as(admin, { method: 'POST', url: '/api/users', payload: { email: `${uniqueId('bare')}@${a.id}.test`, name: 'No role', password: PASSWORD, primaryCompanyId: a.companyId } });
  const noRole = (await ctx.login(a.id, bare.json().email, PASSWORD)).json().accessToken as string;

  let operator: string | undefined;
  let operatorEmail = '';
  const tenantIds: string[] = [];
  if (o.operator) {
    const email = (operatorEmail = `${uniqueId('operator')}@platform.test`);
    await provisionTenant(ctx.kernel, { id: PLATFORM_TENANT, name: 'Platform operators', company: { code: 'PLATFORM', name: 'Platform' }, admin: { email, name: 'Operator', password: PASSWORD } });
    operator = (await ctx.login(PLATFORM_TENANT, email, PASSWORD)).json().accessToken;
    tenantIds.push((await ctx.tenant()).id, (await ctx.tenant()).id);
  }

  const mine = await buildDataset(ctx.app, api, { token: admin, marker: newMarker(o.seed, 'fa'), seed: o.seed, copies: 3 });
  const theirs: Dataset[] = [
    await buildDataset(ctx.app, api, { token: admin, company: second, marker: newMarker(o.seed, 'fc'), seed: o.seed + 1 }),
    await buildDataset(ctx.app, api, { token: b.adminToken, marker: newMarker(o.seed, 'fb'), seed: o.seed + 2 }),
  ];
  const pool = new Map<string, DataRow[]>();
  for (const row of mine.rows) pool.set(row.entity, [...(pool.get(row.entity) ?? []), row]);
  // the admin's own tenant-level rows (users, roles, ...) are reachable from any company: only company rows of C2 are elsewhere
  const elsewhere = new Map<string, string[]>();
  for (const [i, d] of theirs.entries()) {
    for (const row of d.rows) if (i === 1 || api.model(row.entity)?.scope === 'company') elsewhere.set(row.entity, [...(elsewhere.get(row.entity) ?? []), row.id]);
  }
  const refreshTokens: string[] = [];
  for (let i = 0; i < 3; i++) refreshTokens.push((await ctx.login(a.id, a.adminEmail, PASSWORD)).json().refreshToken);
  const accounts: Partial<Record<Caller, [string, string]>> = {
    admin: [a.id, a.adminEmail],
    viewer: [a.id, viewer.email],
    noRole: [a.id, bare.json().email],
    otherTenant: [b.id, b.adminEmail],
    operator: [PLATFORM_TENANT, operatorEmail],
  };
  const tokens: World['tokens'] = { admin, viewer: viewer.token, noRole, none: undefined, otherTenant: b.adminToken, operator };
  return {
    ctx,
    api,
    answers,
    a,
    b,
    second,
    foreign,
    pool,
    elsewhere,
    tenantIds,
    refreshTokens,
    tokens,
    markers: { a: mine.marker, b: theirs[1].marker },
    async renew(caller) {
      const account = accounts[caller];
      if (!account || caller === 'none' || caller === 'forged') return;
      const res = await ctx.login(account[0], account[1], PASSWORD);
      if (res.statusCode !== 200) throw new Error(`renewing ${caller}: ${res.body}`);
      tokens[caller] = res.json().accessToken;
    },
    forged: [
      ...Object.values(forgedTokens(admin, b.adminToken, viewer.token)).map((tok) => `Bearer ${tok}`),
      `Basic ${Buffer.from(`${a.adminEmail}:${PASSWORD}`).toString('base64')}`,
      `Token ${admin}`,
      admin,
      'Bearer',
      `Bearer ${admin}x`,
      `Bearer ${admin}.x`,
      `Bearer ${admin}, Bearer ${admin}`,
      `Bearer ${admin.split('.').slice(0, 2).join('.')}.`,
      `Bearer ${'A'.repeat(9000)}.e30.x`,
    ],
    credentials: [
      { tenant: a.id, email: a.adminEmail, password: PASSWORD },
      { tenant: a.id, email: viewer.email, password: PASSWORD },
      { tenant: b.id, email: b.adminEmail, password: PASSWORD },
    ],
  };
}
