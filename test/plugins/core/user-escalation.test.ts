// Nobody changes a user who holds rights they lack (OWASP API5): a user
// manager cannot take over an administrator or anyone holding a code they do
// not hold, by PATCH, PUT, DELETE or a new password; reading stays open.
import t, { type Test } from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { apiAs, expectProblem, expectStatus, UNKNOWN_ID, type Api } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const admin = apiAs(ctx, tenant.adminToken);
const me = expectStatus(await admin('GET', '/api/auth/me'), 200, 'me');
const MANAGE = ['core:user:view', 'core:user:manage'];
let seq = 0;

const roleId = async (name: string) => expectStatus(await admin('GET', `/api/roles?search=${name}`), 200, 'roles').items.find((r: { name: string }) => r.name === name).id as string;
const newRole = async (permissions: string[]) => expectStatus(await admin('POST', '/api/roles', { name: `role-${++seq}`, permissions }), 201, 'role').id as string;

/** A user created by the administrator, holding these roles. */
async function userWithRoles(roleIds: string[]): Promise<{ id: string; email: string; token: string }> {
  const email = `user${++seq}@example.test`;
  const u = expectStatus(await admin('POST', '/api/users', { email, name: `User ${seq}`, password: PASSWORD, primaryCompanyId: tenant.companyId }), 201, 'create user');
  expectStatus(await admin('PUT', `/api/users/${u.id}/roles`, { roleIds }), 200, 'roles');
  const login = expectStatus(await ctx.login(tenant.id, email, PASSWORD), 200, 'login');
  return { id: u.id, email, token: login.accessToken };
}

/** Every way to change user `id`, with the status that means it was done. */
function changes(id: string): [string, Parameters<Api>, number][] {
  const email = `changed${++seq}@example.test`;
  return [
    ['set the password', ['PUT', `/api/users/${id}/password`, { password: 'taken over!' }], 204],
    ['PATCH the e-mail', ['PATCH', `/api/users/${id}`, { email }], 200],
    ['PUT the user', ['PUT', `/api/users/${id}`, { email, name: 'Taken over', isActive: true, language: null, primaryCompanyId: null, organizationId: null }], 200],
    ['DELETE the user', ['DELETE', `/api/users/${id}`], 204],
  ];
}

async function expectRefused(t: Test, api: Api, target: { id: string; email: string }, what: string) {
  for (const [how, request] of changes(target.id)) expectProblem(t, await api(...request), 403, 'FORBIDDEN', `${what}: ${how}`);
  const still = expectStatus(await admin('GET', `/api/users/${target.id}`), 200, `${what}: still there`);
  t.equal(still.email, target.email, `${what}: e-mail unchanged`);
  t.equal((await ctx.login(tenant.id, target.email, PASSWORD)).statusCode, 200, `${what}: the old password still logs in`);
  expectProblem(t, await ctx.login(tenant.id, target.email, 'taken over!'), 401, 'INVALID_CREDENTIALS', `${what}: the new one does not`);
}

async function expectAllowed(t: Test, api: Api, id: string, what: string) {
  for (const [how, request, status] of changes(id)) t.equal((await api(...request)).statusCode, status, `${what}: ${how}`);
  expectProblem(t, await admin('GET', `/api/users/${id}`), 404, 'NOT_FOUND', `${what}: deleted`);
}

t.test('a user manager cannot take over the administrator, but still reads them', async (t) => {
  const manager = await ctx.user(tenant, { codes: MANAGE });
  const api = apiAs(ctx, manager.token);
  await expectRefused(t, api, { id: me.id, email: tenant.adminEmail }, 'admin');
  t.equal(expectStatus(await api('GET', `/api/users/${me.id}`), 200, 'read').email, tenant.adminEmail, 'reading stays open');
  // the roles a user holds are role management, for administrators: not a user manager's to read
  expectProblem(t, await api('GET', `/api/users/${me.id}/roles`), 403, 'ADMIN_REQUIRED', 'roles');
  expectProblem(t, await api('PATCH', `/api/users/${UNKNOWN_ID}`, { name: 'x' }), 404, 'NOT_FOUND', 'an unknown user is still a 404');
  expectProblem(t, await api('PUT', `/api/users/${UNKNOWN_ID}/password`, { password: 'long enough!' }), 404, 'NOT_FOUND', 'password of an unknown user');
});

t.test('nor a user holding a code the manager lacks, counted over all their roles', async (t) => {
  const manager = await ctx.user(tenant, { codes: [...MANAGE, 'core:group:view'] });
  const api = apiAs(ctx, manager.token);
  await expectRefused(t, api, await userWithRoles([await newRole(['core:user:view', 'core:role:manage'])]), 'one role with more');
  // each role alone is within the manager's codes, their union is not
  const within = await newRole(['core:user:view', 'core:group:view']);
  await expectRefused(t, api, await userWithRoles([within, await newRole(['core:company:view'])]), 'two roles with more');
});

t.test('only an administrator changes an administrator, even against every code', async (t) => {
  const everything = ctx.kernel.permissions.all();
  const almost = await ctx.user(tenant, { codes: everything });
  const api = apiAs(ctx, almost.token);
  await expectRefused(t, api, { id: me.id, email: tenant.adminEmail }, 'admin by a holder of every code');
  const peer = await userWithRoles([await newRole(everything)]);
  await expectAllowed(t, api, peer.id, 'a user with the same codes');
});

t.test('within their own codes a manager changes users', async (t) => {
  const manager = await ctx.user(tenant, { codes: MANAGE });
  const api = apiAs(ctx, manager.token);
  await expectAllowed(t, api, (await userWithRoles([await newRole(['core:user:view'])])).id, 'fewer codes');
  await expectAllowed(t, api, (await userWithRoles([await newRole(MANAGE)])).id, 'the same codes');
  await expectAllowed(t, api, (await userWithRoles([])).id, 'no role');
  await expectAllowed(t, api, (await userWithRoles([await roleId('member')])).id, 'the built-in member role (no codes)');
});

t.test('anyone changes themselves within what the routes allow', async (t) => {
  const narrow = await ctx.user(tenant, { codes: MANAGE });
  const api = apiAs(ctx, narrow.token);
  t.equal(expectStatus(await api('PATCH', `/api/users/${narrow.id}`, { name: 'Renamed' }), 200, 'rename').name, 'Renamed');
  t.equal((await api('PUT', `/api/users/${narrow.id}/password`, { password: 'my own secret' })).statusCode, 204, 'own password');
  t.equal((await ctx.login(tenant.id, narrow.email, 'my own secret')).statusCode, 200, 'logs in with it');
});

t.test('an administrator changes anyone, another administrator too', async (t) => {
  const other = await userWithRoles([await roleId('admin')]);
  expectStatus(await admin('PATCH', `/api/users/${other.id}`, { name: 'Second admin' }), 200, 'admin changes an admin');
  expectStatus(await apiAs(ctx, other.token)('PATCH', `/api/users/${me.id}`, { name: 'First admin' }), 200, 'and back');
  const manager = await ctx.user(tenant, { codes: MANAGE });
  t.equal((await admin('PUT', `/api/users/${manager.id}/password`, { password: 'set by the admin' })).statusCode, 204, 'admin sets a password');
  await expectAllowed(t, admin, other.id, 'admin on another admin');
});
