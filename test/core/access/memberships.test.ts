// A right taken away stops at the next request, with the same access token:
// roles and companies are read per request (access/memberships.ts), never from
// the token, in the process that made the change and in every other one.
import t, { type Test } from 'tap';
import { build, onPglite, type TestContext } from '../../helper.ts';
import { SYSTEM } from '../../../core/access/principal.ts';

const CRM_VIEW = 'erp:crm:view';
const USER_VIEW = 'core:user:view';

function expectCode(t: Test, res: { statusCode: number; json(): { code?: string } }, status: number, code: string, name: string) {
  t.equal(res.statusCode, status, name);
  t.equal(res.json().code, code, name);
}

/** A user holding CRM and user reads in the tenant's company and a second one, and the admin's helpers. */
async function scene(ctx: TestContext) {
  const tenant = await ctx.tenant();
  const second = await ctx.company(tenant, 'SECOND');
  const user = await ctx.user(tenant, { codes: [CRM_VIEW, USER_VIEW], companies: [tenant.companyId, second] });
  const admin = (method: string, url: string, payload?: object) => ctx.as(tenant.adminToken, { method: method as 'GET', url, ...(payload === undefined ? {} : { payload }) });
  return { tenant, second, user, admin };
}

const customersIn = (ctx: TestContext, token: string, companyId: string) => ctx.as(token, { method: 'GET', url: '/api/crm/customers', headers: { 'x-company-id': companyId } });
const users = (ctx: TestContext, token: string) => ctx.as(token, { method: 'GET', url: '/api/users' });

t.test('the access token names who and which session, no roles or companies', async (t) => {
  const ctx = await build(t);
  const { tenant } = await scene(ctx);
  const payload = JSON.parse(Buffer.from(tenant.adminToken.split('.')[1], 'base64url').toString());
  t.same(Object.keys(payload).sort(), ['exp', 'iat', 'ims', 'iss', 'sid', 'sub', 'tid']);
});

t.test('in the process that made the change', async (t) => {
  const ctx = await build(t);
  const { tenant, second, user, admin } = await scene(ctx);

  t.test('roles set to none: the same token is refused at once', async (t) => {
    const other = await ctx.user(tenant, { codes: [CRM_VIEW, USER_VIEW] });
    t.equal((await customersIn(ctx, other.token, tenant.companyId)).statusCode, 200, 'reads customers');
    t.equal((await users(ctx, other.token)).statusCode, 200, 'reads users');
    t.equal((await admin('PUT', `/api/users/${other.id}/roles`, { roleIds: [] })).statusCode, 200);
    expectCode(t, await customersIn(ctx, other.token, tenant.companyId), 403, 'FORBIDDEN', 'customers refused');
    expectCode(t, await users(ctx, other.token), 403, 'FORBIDDEN', 'users refused');
    const me = (await ctx.as(other.token, { method: 'GET', url: '/api/auth/me' })).json();
    t.same([me.roles, me.permissions], [[], []], '/api/auth/me says so too');
  });

  t.test('a company taken away: refused there, the other still works', async (t) => {
    t.equal((await customersIn(ctx, user.token, second)).statusCode, 200, 'reads the second company');
    t.equal((await admin('PUT', `/api/users/${user.id}/companies`, { companyIds: [tenant.companyId] })).statusCode, 200);
    expectCode(t, await customersIn(ctx, user.token, second), 403, 'COMPANY_FORBIDDEN', 'the removed company');
    t.equal((await customersIn(ctx, user.token, tenant.companyId)).statusCode, 200, 'the company kept');
    t.equal((await admin('PUT', `/api/users/${user.id}/companies`, { companyIds: [tenant.companyId, second] })).statusCode, 200);
    t.equal((await customersIn(ctx, user.token, second)).statusCode, 200, 'given back: works again at once');
  });

  t.test('a company deactivated: refused there', async (t) => {
    const third = await ctx.company(tenant, 'THIRD', [user.id]);
    t.equal((await customersIn(ctx, user.token, third)).statusCode, 200);
    t.equal((await admin('PATCH', `/api/companies/${third}`, { isActive: false })).statusCode, 200);
    expectCode(t, await customersIn(ctx, user.token, third), 403, 'COMPANY_FORBIDDEN', 'an inactive company');
  });

  t.test("a role's codes cut: refused at once", async (t) => {
    const other = await ctx.user(tenant, { codes: [CRM_VIEW] });
    const role = (await admin('GET', `/api/users/${other.id}/roles`)).json().items[0];
    t.equal((await admin('PATCH', `/api/roles/${role.id}`, { permissions: [] })).statusCode, 200);
    expectCode(t, await customersIn(ctx, other.token, tenant.companyId), 403, 'FORBIDDEN', 'customers refused');
  });

  t.test('a deactivated user: 401 at once', async (t) => {
    const other = await ctx.user(tenant, { codes: [CRM_VIEW] });
    t.equal((await admin('PATCH', `/api/users/${other.id}`, { isActive: false })).statusCode, 200);
    expectCode(t, await customersIn(ctx, other.token, tenant.companyId), 401, 'UNAUTHENTICATED', 'deactivated');
  });

  t.test('an administrator demoted loses admin routes at once', async (t) => {
    const other = await ctx.user(tenant, { codes: [] });
    const adminRole = (await admin('GET', '/api/roles')).json().items.find((r: { name: string }) => r.name === 'admin').id as string;
    t.equal((await admin('PUT', `/api/users/${other.id}/roles`, { roleIds: [adminRole] })).statusCode, 200);
    t.equal((await ctx.as(other.token, { method: 'GET', url: '/api/roles' })).statusCode, 200, 'promoted: at once too');
    t.equal((await admin('PUT', `/api/users/${other.id}/roles`, { roleIds: [] })).statusCode, 200);
    expectCode(t, await ctx.as(other.token, { method: 'GET', url: '/api/roles' }), 403, 'ROLE_REQUIRED', 'demoted');
  });

  t.test('ctx.as() reads the same source', async (t) => {
    const other = await ctx.user(tenant, { codes: [CRM_VIEW] });
    const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM });
    t.equal((await system.as(other.id))!.principal.roles.length, 1, 'one role');
    t.equal((await admin('PUT', `/api/users/${other.id}/roles`, { roleIds: [] })).statusCode, 200);
    t.same((await system.as(other.id))!.principal.roles, [], 'none after the change');
    t.equal((await admin('PATCH', `/api/users/${other.id}`, { isActive: false })).statusCode, 200);
    t.equal(await system.as(other.id), null, 'inactive: no context');
  });
});

t.test('in another process on the same server', { skip: onPglite && 'embedded PGlite serves one process' }, async (t) => {
  const one = await build(t);
  const two = await build(t);
  const { tenant, second, user, admin } = await scene(one);

  /** resolves once process two heard that the tenant's memberships changed */
  const heard = (tenantId: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no notification within 5 s')), 5000);
      const stop = two.kernel.roleChanges.subscribe((id) => {
        if (id !== tenantId) return;
        clearTimeout(timer);
        stop();
        resolve();
      });
    });
  const change = async (t: Test, method: string, url: string, payload: object) => {
    const arrived = heard(tenant.id);
    t.equal((await admin(method, url, payload)).statusCode, 200, `${method} ${url}`);
    await arrived;
  };

  t.equal((await customersIn(two, user.token, second)).statusCode, 200, 'process two has the user cached');
  t.equal((await users(two, user.token)).statusCode, 200);
  await change(t, 'PUT', `/api/users/${user.id}/companies`, { companyIds: [tenant.companyId] });
  expectCode(t, await customersIn(two, user.token, second), 403, 'COMPANY_FORBIDDEN', 'the removed company, there');
  await change(t, 'PUT', `/api/users/${user.id}/roles`, { roleIds: [] });
  expectCode(t, await customersIn(two, user.token, tenant.companyId), 403, 'FORBIDDEN', 'no role, there');
  expectCode(t, await users(two, user.token), 403, 'FORBIDDEN', 'no user list, there');
});

t.test('a user sub-resource takes the guards of what it exposes', async (t) => {
  const ctx = await build(t);
  const { tenant, admin } = await scene(ctx);
  // a directory grant: names and e-mails of users only, as PM and BI viewers hold
  const viewer = await ctx.user(tenant, { codes: ['erp:bi:view'] });
  const adminId = (await admin('GET', '/api/auth/me')).json().id as string;
  const lookup = (id: string, what: string) => ctx.as(viewer.token, { method: 'GET', url: `/api/users/${id}/${what}` });
  t.equal((await ctx.as(viewer.token, { method: 'GET', url: `/api/users/${adminId}` })).statusCode, 200, 'the directory entry reads');
  for (const what of ['roles', 'companies']) {
    const known = await lookup(adminId, what);
    const unknown = await lookup('0190a0b0-0000-7000-8000-000000000000', what);
    t.equal(known.statusCode, 403, `${what} of the administrator: refused`);
    t.same([unknown.statusCode, unknown.json().code], [known.statusCode, known.json().code], `${what}: a random id answers alike`);
  }
  const roles = await admin('GET', `/api/users/${adminId}/roles`);
  t.same(
    roles.json().items.map((r: { name: string }) => r.name),
    ['admin'],
    'an administrator reads them',
  );
  t.equal((await admin('GET', `/api/users/${adminId}/companies`)).json().items[0].id, tenant.companyId);
});
