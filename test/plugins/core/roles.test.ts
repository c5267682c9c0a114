// /api/roles (admin protected): roles hold permission codes the loaded
// manifests declare; the built-in roles stay; a change reaches the holders'
// abilities at once.
import t from 'tap';
import { build } from '../../helper.ts';
import { apiAs, checkAdminGuard, expectProblem, expectStatus } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);
const byName = async (name: string) => expectStatus(await api('GET', `/api/roles?search=${name}`), 200, 'roles').items.find((r: { name: string }) => r.name === name);

t.test('the built-in roles are there, and stay', async (t) => {
  const list = expectStatus(await api('GET', '/api/roles?page=1&size=1000'), 200, 'roles');
  t.same(
    list.items.map((r: { name: string }) => r.name),
    ['admin', 'member'],
  );
  t.ok(list.items.every((r: { builtIn: boolean }) => r.builtIn));
  const admin = await byName('admin');
  const member = await byName('member');
  expectProblem(t, await api('DELETE', `/api/roles/${admin.id}`), 409, 'CONFLICT', 'delete admin');
  expectProblem(t, await api('DELETE', `/api/roles/${member.id}`), 409, 'CONFLICT', 'delete member');
  expectProblem(t, await api('PATCH', `/api/roles/${member.id}`, { name: 'guest' }), 409, 'CONFLICT', 'rename member');
  expectProblem(t, await api('PATCH', `/api/roles/${admin.id}`, { permissions: ['core:user:view'] }), 409, 'CONFLICT', "admin's codes are every code");
  t.match(expectStatus(await api('PATCH', `/api/roles/${member.id}`, { description: 'Everybody', permissions: ['core:dashboard:view'] }), 200, 'member gets a code'), {
    description: 'Everybody',
    permissions: ['core:dashboard:view'],
  });
  expectProblem(t, await api('PATCH', `/api/roles/${member.id}`, { builtIn: false }), 400, 'VALIDATION_FAILED', 'builtIn is read-only');
  expectProblem(t, await api('POST', '/api/roles', { name: 'fake', builtIn: true }), 400, 'VALIDATION_FAILED', 'builtIn cannot be set');
  expectProblem(t, await api('POST', '/api/roles', { name: 'admin' }), 409, 'CONFLICT', 'names are unique');
});

t.test('permissions must be codes the loaded modules declare', async (t) => {
  const res = await api('POST', '/api/roles', { name: 'sales', description: 'Sales people', permissions: ['erp:catalog:view', 'core:company:view'] });
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json(), { name: 'sales', permissions: ['erp:catalog:view', 'core:company:view'], builtIn: false, version: 1 });
  const bodies: [string, unknown, string][] = [
    ['unknown code', ['erp:catalog:view', 'erp:nothing:view'], '/permissions/1'],
    ['a near miss', ['core:companies:view'], '/permissions/0'],
    ['twice', ['erp:catalog:view', 'erp:catalog:view'], '/permissions/1'],
    ['not a list', 'erp:catalog:view', '/permissions'],
    ['a number', [42], '/permissions/0'],
    ['an object', { code: 'erp:catalog:view' }, '/permissions'],
  ];
  for (const [what, permissions, path] of bodies) {
    const bad = await api('POST', '/api/roles', { name: `bad-${path.length}`, permissions });
    expectProblem(t, bad, 400, 'VALIDATION_FAILED', what);
    t.same(
      bad.json().errors.map((e: { path: string }) => e.path),
      [path],
      what,
    );
    expectProblem(t, await api('PATCH', `/api/roles/${res.json().id}`, { permissions }), 400, 'VALIDATION_FAILED', `PATCH ${what}`);
  }
  t.match(expectStatus(await api('POST', '/api/roles', { name: 'empty' }), 201, 'no codes'), { permissions: null });
  expectProblem(t, await api('POST', '/api/roles', { name: 'x'.repeat(61) }), 400, 'VALIDATION_FAILED', 'name too long');
  expectProblem(t, await api('POST', '/api/roles', { name: 'x', rights: [] }), 400, 'VALIDATION_FAILED', 'unknown field');
});

t.test('a changed role changes what its holders may do, at once', async (t) => {
  const holder = await ctx.user(tenant, { codes: [], role: 'readers' });
  const asHolder = apiAs(ctx, holder.token);
  expectProblem(t, await asHolder('GET', '/api/users'), 403, 'FORBIDDEN', 'nothing yet');
  const role = await byName('readers');
  expectStatus(await api('PATCH', `/api/roles/${role.id}`, { permissions: ['core:user:view'] }, { 'if-match': `"${role.version}"` }), 200, 'grant');
  t.equal((await asHolder('GET', '/api/users')).statusCode, 200, 'the same token may now read users');
  expectStatus(await api('PATCH', `/api/roles/${role.id}`, { permissions: [] }), 200, 'revoke');
  expectProblem(t, await asHolder('GET', '/api/users'), 403, 'FORBIDDEN', 'and no longer');
  t.equal((await api('DELETE', `/api/roles/${role.id}`)).statusCode, 204);
  expectProblem(t, await asHolder('GET', '/api/users'), 403, 'FORBIDDEN', 'a deleted role grants nothing');
});

t.test('admin protected', async (t) => {
  const role = await byName('member');
  for (const request of [
    { method: 'GET', url: '/api/roles' },
    { method: 'GET', url: `/api/roles/${role.id}` },
    { method: 'POST', url: '/api/roles', payload: { name: 'sneaky', permissions: ['core:role:manage'] } },
    { method: 'PATCH', url: `/api/roles/${role.id}`, payload: { permissions: ['core:role:manage'] } },
  ] as const)
    await checkAdminGuard(t, ctx, tenant, ['core:role:view', 'core:role:manage'], request);
  t.notOk((await byName('member')).permissions?.includes('core:role:manage'), 'nothing changed');
  const theirs = apiAs(ctx, (await ctx.tenant()).adminToken);
  expectProblem(t, await theirs('GET', `/api/roles/${role.id}`), 404, 'NOT_FOUND', 'another tenant');
});
