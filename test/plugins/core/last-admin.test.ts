// The tenant keeps an active administrator: deactivating, deleting or
// replacing the last one is a 409, one request after another and when two
// administrators race to remove each other. A deactivated or deleted user's
// tokens die at once, and so does a role taken away: an administrator whose
// admin role was just taken ("ex-admin") is refused at their next request.
import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { build, onPglite, PASSWORD, type TestTenant } from '../../helper.ts';
import { apiAs, expectProblem, expectStatus, type Api } from './core-api.ts';

const ctx = await build(t);
// PGlite runs one statement at a time: its races cannot interleave, one round there checks the outcome
const ROUNDS = onPglite ? 1 : 5;

interface Admin {
  id: string;
  api: Api;
}
type Admins = { tenant: TestTenant; a: Admin; b: Admin; adminRole: string };

/** A user created by A, holding the admin role, logged in. */
async function newAdmin(a: Api, tenant: TestTenant, adminRole: string, name: string): Promise<Admin> {
  const email = `${name}@${tenant.id}.test`;
  const u = expectStatus(await a('POST', '/api/users', { email, name, password: PASSWORD, primaryCompanyId: tenant.companyId }), 201, `create ${name}`);
  expectStatus(await a('PUT', `/api/users/${u.id}/roles`, { roleIds: [adminRole] }), 200, `${name} is admin`);
  const login = expectStatus(await ctx.login(tenant.id, email, PASSWORD), 200, `${name} logs in`);
  return { id: u.id, api: apiAs(ctx, login.accessToken) };
}

/** A fresh tenant whose only administrators are A (its first) and B. */
async function twoAdmins(): Promise<Admins> {
  const tenant = await ctx.tenant();
  const a = apiAs(ctx, tenant.adminToken);
  const adminRole = expectStatus(await a('GET', '/api/roles?search=admin'), 200, 'roles').items.find((r: { name: string }) => r.name === 'admin').id;
  const aId = expectStatus(await a('GET', '/api/auth/me'), 200, 'me').id;
  return { tenant, adminRole, a: { id: aId, api: a }, b: await newAdmin(a, tenant, adminRole, 'b') };
}

/** Active users holding the admin role, read from the database. */
async function activeAdmins(tenant: TestTenant): Promise<string[]> {
  const t = ctx.kernel.tenants.cached(tenant.id)!;
  const rows = (await ctx.kernel.dbs
    .get(t.connectionKey)
    .em.getConnection()
    .execute(
      `select u.id from "${t.schema}".core_users u join "${t.schema}".core_user_roles ur on ur.user_id = u.id
     join "${t.schema}".core_roles r on r.id = ur.role_id where r.name = 'admin' and u.is_active order by u.id`,
    )) as { id: string }[];
  return rows.map((r) => r.id);
}

const deactivate = (who: Admin, id: string) => who.api('PATCH', `/api/users/${id}`, { isActive: false });
const replace = (who: Admin, id: string) =>
  who.api('PUT', `/api/users/${id}`, { email: `last@${id.slice(-6)}.test`, name: 'Last', isActive: false, language: null, primaryCompanyId: null, organizationId: null });

t.test('the last active admin is neither deactivated, replaced inactive, deleted nor stripped of the role', async (t) => {
  const s = await twoAdmins();
  const { tenant, a, b } = s;
  expectStatus(await a.api('PUT', `/api/users/${b.id}/roles`, { roleIds: [] }), 200, "A takes B's admin role: A is the last admin");
  // B's rights went with the role, at B's next request
  expectProblem(t, await deactivate(b, a.id), 403, 'FORBIDDEN', 'the ex-admin B deactivates A');
  expectProblem(t, await b.api('DELETE', `/api/users/${a.id}`), 403, 'FORBIDDEN', 'the ex-admin B deletes A');
  expectProblem(t, await b.api('PUT', `/api/users/${a.id}/roles`, { roleIds: [] }), 403, 'ROLE_REQUIRED', "the ex-admin B takes A's role");
  expectProblem(t, await a.api('PUT', `/api/users/${a.id}/roles`, { roleIds: [] }), 409, 'CONFLICT', 'A takes their own admin role');
  expectProblem(t, await deactivate(a, a.id), 409, 'CONFLICT', 'A deactivates themselves');
  expectProblem(t, await replace(a, a.id), 409, 'CONFLICT', 'A replaces themselves inactive');
  expectProblem(t, await a.api('DELETE', `/api/users/${a.id}`), 409, 'CONFLICT', 'A deletes themselves');
  t.same(await activeAdmins(tenant), [a.id], 'A is still an active admin');
  t.equal((await ctx.login(tenant.id, tenant.adminEmail, PASSWORD)).statusCode, 200, 'and logs in');
  t.equal(expectStatus(await a.api('PATCH', `/api/users/${a.id}`, { name: 'Still here' }), 200, 'other changes pass').name, 'Still here');
  t.equal(expectStatus(await deactivate(a, b.id), 200, 'a user who is no admin goes').isActive, false);
});

const codeOf = (res: LightMyRequestResponse) => (res.body ? res.json().code : undefined);

interface Side {
  send: (s: Admins) => Promise<LightMyRequestResponse>;
  ok: number;
  /** how the other side's request is refused once this one won, besides 409 CONFLICT */
  refusesOther: [number, string][];
}

/**
 * Runs a race ROUNDS times on fresh tenants: `first` removes B, `second`
 * (sent `offset` ms later) removes A. Exactly one succeeds and the admin it
 * spared remains; the other is a 409, or a 401 when the winner had already
 * deactivated or deleted its sender (its session ended before it arrived: with
 * an offset, and on PGlite, which runs one request's queries after the other's),
 * or a 403 when the winner had taken its sender's admin role.
 */
async function race(t: Test, what: string, offset: number, first: Side, second: Side) {
  for (let round = 1; round <= ROUNDS; round++) {
    const s = await twoAdmins();
    const [r1, r2] = await Promise.all([
      first.send(s),
      new Promise<LightMyRequestResponse>((resolve, reject) => {
        setTimeout(() => second.send(s).then(resolve, reject), offset);
      }),
    ]);
    const label = `${what}, round ${round} (${r1.statusCode}, ${r2.statusCode})`;
    const firstWon = r1.statusCode === first.ok;
    t.equal([firstWon, r2.statusCode === second.ok].filter(Boolean).length, 1, `${label}: exactly one succeeds`);
    const lost = firstWon ? r2 : r1;
    const refusals = [[409, 'CONFLICT'], ...(firstWon ? first : second).refusesOther];
    t.ok(
      refusals.some(([status, code]) => lost.statusCode === status && codeOf(lost) === code),
      `${label}: the other is refused (${codeOf(lost)})`,
    );
    t.same(await activeAdmins(s.tenant), [firstWon ? s.a.id : s.b.id], `${label}: the spared admin remains active`);
  }
}

const aDeactivatesB: Side = { send: ({ a, b }) => deactivate(a, b.id), ok: 200, refusesOther: [[401, 'UNAUTHENTICATED']] };
const bDeactivatesA: Side = { send: ({ a, b }) => deactivate(b, a.id), ok: 200, refusesOther: [[401, 'UNAUTHENTICATED']] };
const aTakesBsRole: Side = { send: ({ a, b }) => a.api('PUT', `/api/users/${b.id}/roles`, { roleIds: [] }), ok: 200, refusesOther: [[403, 'FORBIDDEN']] };
const aDeletesB: Side = { send: ({ a, b }) => a.api('DELETE', `/api/users/${b.id}`), ok: 204, refusesOther: [[401, 'UNAUTHENTICATED']] };

t.test('A deactivates B while B deactivates A', async (t) => {
  for (const offset of [0, 20]) await race(t, `offset ${offset} ms`, offset, aDeactivatesB, bDeactivatesA);
});

t.test("A removes B's admin role while B deactivates A", async (t) => {
  for (const offset of [0, 20]) await race(t, `offset ${offset} ms`, offset, aTakesBsRole, bDeactivatesA);
});

t.test('A deletes B while B deactivates A', async (t) => {
  await race(t, 'no offset', 0, aDeletesB, bDeactivatesA);
});
