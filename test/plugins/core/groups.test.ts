// /api/groups and their members (/api/group-members, listed per group at
// /api/groups/:groupId/members), under core:group:view and core:group:manage.
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { apiAs, expectProblem, expectStatus, UNKNOWN_ID } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);
let seq = 0;
const group = async (body: Record<string, unknown> = {}) => expectStatus(await api('POST', '/api/groups', { name: `Group ${++seq}`, ...body }), 201, 'create group');
const user = async () => expectStatus(await api('POST', '/api/users', { email: `g${++seq}@example.test`, name: 'G', password: PASSWORD }), 201, 'create user');

t.test('groups: create, read, PATCH, PUT, delete, list', async (t) => {
  const res = await api('POST', '/api/groups', { name: 'Support', description: 'First line' });
  t.equal(res.statusCode, 201, res.body);
  const g = res.json();
  t.match(g, { name: 'Support', description: 'First line', organizationId: null, isActive: true, version: 1 });
  t.match(expectStatus(await api('PATCH', `/api/groups/${g.id}`, { isActive: false }), 200, 'patch'), { isActive: false, version: 2 });
  expectProblem(t, await api('PUT', `/api/groups/${g.id}`, { name: 'Support' }), 400, 'VALIDATION_FAILED', 'PUT needs every field');
  t.match(expectStatus(await api('PUT', `/api/groups/${g.id}`, { name: 'Support', description: null, organizationId: null, isActive: true }, { 'if-match': '"2"' }), 200, 'put'), { version: 3 });
  expectProblem(t, await api('POST', '/api/groups', { name: 'Support' }), 409, 'CONFLICT', 'names are unique');
  const other = await group({ isActive: false });
  const page = expectStatus(await api('GET', '/api/groups?page=1&size=1000&sort=-createdAt'), 200, 'list');
  t.equal(page.items[0].id, other.id);
  t.equal(page.total, 2);
  t.equal(expectStatus(await api('GET', '/api/groups?isActive=true'), 200, 'active').total, 1);
  t.equal(expectStatus(await api('GET', '/api/groups?search=supp'), 200, 'search').total, 1);
  t.equal((await api('DELETE', `/api/groups/${other.id}`)).statusCode, 204);
});

t.test('members', async (t) => {
  const g = await group();
  const [a, b] = [await user(), await user()];
  const ma = expectStatus(await api('POST', '/api/group-members', { groupId: g.id, userId: a.id }), 201, 'add a');
  expectStatus(await api('POST', '/api/group-members', { groupId: g.id, userId: b.id }), 201, 'add b');
  expectProblem(t, await api('POST', '/api/group-members', { groupId: g.id, userId: a.id }), 409, 'CONFLICT', 'a member once');
  const members = expectStatus(await api('GET', `/api/groups/${g.id}/members?page=1&size=1000`), 200, 'members');
  t.match(members, { page: 1, size: 1000, total: 2 });
  t.same(members.items.map((m: { userId: string }) => m.userId).sort(), [a.id, b.id].sort());
  t.equal(expectStatus(await api('GET', `/api/group-members?userId=${a.id}`), 200, 'groups of a user').total, 1);
  t.equal((await api('DELETE', `/api/group-members/${ma.id}`)).statusCode, 204, 'remove a');
  t.equal(expectStatus(await api('GET', `/api/groups/${g.id}/members`), 200, 'members').total, 1);
  expectProblem(t, await api('PATCH', `/api/group-members/${ma.id}`, { userId: b.id }), 405, 'METHOD_NOT_ALLOWED', 'a membership is added or removed, not changed');
  expectProblem(t, await api('POST', '/api/group-members', { groupId: g.id, userId: UNKNOWN_ID }), 400, 'VALIDATION_FAILED', 'an unknown user');
  expectProblem(t, await api('POST', '/api/group-members', { groupId: UNKNOWN_ID, userId: a.id }), 400, 'VALIDATION_FAILED', 'an unknown group');
  expectProblem(t, await api('GET', `/api/groups/${UNKNOWN_ID}/members`), 404, 'NOT_FOUND', 'members of no group');
  expectProblem(t, await api('GET', '/api/groups/nope/members'), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('GET', `/api/groups/${g.id}/members?bogus=1`), 400, 'VALIDATION_FAILED');
  t.equal((await api('DELETE', `/api/users/${b.id}`)).statusCode, 204, 'a deleted user leaves their groups');
  t.equal(expectStatus(await api('GET', `/api/groups/${g.id}/members`), 200, 'members').total, 0);
  t.equal((await api('DELETE', `/api/groups/${g.id}`)).statusCode, 204, 'a group goes with its memberships');
});

t.test('read privilege and manage privilege', async (t) => {
  const g = await group();
  const viewer = apiAs(ctx, (await ctx.user(tenant, { codes: ['core:group:view'] })).token);
  t.equal((await viewer('GET', '/api/groups?page=1&size=1000')).statusCode, 200);
  t.equal((await viewer('GET', `/api/groups/${g.id}/members`)).statusCode, 200);
  expectProblem(t, await viewer('POST', '/api/groups', { name: 'v' }), 403, 'FORBIDDEN');
  expectProblem(t, await viewer('POST', '/api/group-members', { groupId: g.id, userId: (await user()).id }), 403, 'FORBIDDEN');
  const stranger = apiAs(ctx, (await ctx.user(tenant, { codes: ['core:user:view'] })).token);
  for (const url of ['/api/groups', `/api/groups/${g.id}`, `/api/groups/${g.id}/members`, '/api/group-members']) {
    expectProblem(t, await stranger('GET', url), 403, 'FORBIDDEN', `${url} without core:group:view`);
  }
  const manager = apiAs(ctx, (await ctx.user(tenant, { codes: ['core:group:manage'] })).token);
  t.equal((await manager('POST', '/api/groups', { name: 'By a manager' })).statusCode, 201);
});

t.test('other tenants', async (t) => {
  const g = await group();
  const theirs = apiAs(ctx, (await ctx.tenant()).adminToken);
  expectProblem(t, await theirs('GET', `/api/groups/${g.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('GET', `/api/groups/${g.id}/members`), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('DELETE', `/api/groups/${g.id}`), 404, 'NOT_FOUND');
});

t.test('bad input', async (t) => {
  for (const [what, body] of [
    ['name missing', {}],
    ['name too long', { name: 'n'.repeat(121) }],
    ['unknown field', { name: 'x', members: [] }],
    ['name a number', { name: 7 }],
  ] as const) {
    expectProblem(t, await api('POST', '/api/groups', body), 400, 'VALIDATION_FAILED', what);
  }
});
