// CASL abilities from manifest grants: caller placeholders are bound per
// caller and never shared, accessFilter turns rules into MikroORM filters, and
// role changes take effect once the tenant's abilities are invalidated.
import t from 'tap';
import { subject } from '@casl/ability';
import { AbilityFactory, accessFilter } from '../../core/access/abilities.ts';
import { PermissionCatalog, type CallerValues } from '../../core/access/permission-catalog.ts';
import type { RoleDirectory } from '../../core/access/role-directory.ts';
import type { Manifest } from '../../core/manifest/schema.ts';
import { build, uniqueId } from '../helper.ts';

const manifest: Manifest = {
  id: 'notes', name: 'Notes', version: '1.0.0',
  permissions: [
    { code: 'app:notes:own', description: 'own notes', grants: [{ action: ['read', 'update'], subject: 'Note', conditions: { ownerId: '${user.id}' } }] },
    { code: 'app:notes:company', description: "notes of the caller's companies", grants: [{ action: 'read', subject: 'Note', conditions: { companyId: { $in: '${user.companyIds}' } } }] },
    { code: 'app:notes:view', description: 'every note', grants: [{ action: 'read', subject: 'Note' }] },
    { code: 'app:notes:no-drafts', description: 'never drafts', grants: [{ action: 'read', subject: 'Note', conditions: { status: 'draft' }, inverted: true }] },
    { code: 'app:notes:tags', description: 'tags', grants: [{ action: 'manage', subject: 'Tag' }] },
  ],
};

/** A role directory over an in-memory role → codes map; generation changes on invalidate. */
function fakeRoles(roles: Record<string, string[]>) {
  let generation = 1;
  const dir = {
    roles,
    invalidate() { generation++; },
    isStale: () => false,
    async resolve(_tenant: string, names: string[]) { return { codes: [...new Set(names.flatMap((n) => roles[n] ?? []))], generation }; },
    async codesFor(tenant: string, names: string[]) { return (await dir.resolve(tenant, names)).codes; },
  };
  return dir;
}

const caller = (id: string, companyIds: string[] = []): CallerValues => ({ user: { id, companyIds }, company: { id: companyIds[0] ?? null } });
const note = (o: Record<string, unknown>) => subject('Note', { ...o });

t.test('the permission catalog', async (t) => {
  const catalog = new PermissionCatalog([manifest]);
  t.ok(catalog.has('app:notes:own'));
  t.notOk(catalog.has('app:notes:nope'));
  t.same(catalog.all().sort(), manifest.permissions!.map((p) => p.code).sort());
  t.equal(catalog.templates(['app:notes:own']).usesCaller, true);
  t.equal(catalog.templates(['app:notes:company']).usesCaller, true);
  t.equal(catalog.templates(['app:notes:view', 'app:notes:no-drafts']).usesCaller, false);
  t.same(catalog.templates(['app:removed:code']).rules, [], 'unknown codes grant nothing');
  const template = catalog.templates(['app:notes:own', 'app:notes:company']).rules;
  const bound = PermissionCatalog.bind(template, caller('u-1', ['c-1', 'c-2']));
  t.same(bound.map((r) => r.conditions), [{ ownerId: 'u-1' }, { companyId: { $in: ['c-1', 'c-2'] } }]);
  t.same(template.map((r) => r.conditions), [{ ownerId: '${user.id}' }, { companyId: { $in: '${user.companyIds}' } }], 'binding leaves the template alone');
  t.same(catalog.codesGranting('read', 'Note').sort(), ['app:notes:company', 'app:notes:own', 'app:notes:view']);
  t.same(catalog.codesGranting('delete', 'Tag'), ['app:notes:tags'], 'manage grants every action');
});

t.test('callers with the same roles never share bound values', async (t) => {
  const roles = fakeRoles({ owner: ['app:notes:own'], company: ['app:notes:company'] });
  const factory = new AbilityFactory(new PermissionCatalog([manifest]), roles as unknown as RoleDirectory);
  const alice = await factory.for('t1', ['owner'], caller('alice'));
  const bob = await factory.for('t1', ['owner'], caller('bob'));
  const alice2 = await factory.for('t1', ['owner'], caller('alice'));
  t.not(alice, bob);
  t.ok(alice.can('read', note({ ownerId: 'alice' })));
  t.notOk(alice.can('read', note({ ownerId: 'bob' })));
  t.ok(bob.can('read', note({ ownerId: 'bob' })));
  t.notOk(bob.can('read', note({ ownerId: 'alice' })));
  t.notOk(alice.can('delete', note({ ownerId: 'alice' })), 'only the granted actions');
  t.same(accessFilter(alice, 'read', 'Note'), { ownerId: 'alice' });
  t.same(accessFilter(bob, 'read', 'Note'), { ownerId: 'bob' });
  t.same(accessFilter(alice2, 'read', 'Note'), { ownerId: 'alice' });
  t.same(accessFilter(alice, 'read', 'Note'), { ownerId: 'alice' }, 'still alice after bob was bound');

  // interleaved, concurrent requests of many callers
  const ids = Array.from({ length: 20 }, (_, i) => `user-${i}`);
  const abilities = await Promise.all(ids.map((id) => factory.for('t1', ['owner', 'company'], caller(id, [`co-${id}`]))));
  abilities.forEach((a, i) => {
    t.same(accessFilter(a, 'read', 'Note'), { $or: [{ companyId: { $in: [`co-${ids[i]}`] } }, { ownerId: ids[i] }] }, ids[i]);
  });
});

t.test('an ability without caller values is compiled once and shared', async (t) => {
  const roles = fakeRoles({ viewer: ['app:notes:view', 'app:notes:no-drafts'] });
  const factory = new AbilityFactory(new PermissionCatalog([manifest]), roles as unknown as RoleDirectory);
  const a = await factory.for('t1', ['viewer'], caller('alice'));
  const b = await factory.for('t1', ['viewer'], caller('bob'));
  t.equal(a, b);
  const other = await factory.for('t2', ['viewer'], caller('alice'));
  t.not(other, a, 'per tenant');
});

t.test('accessFilter: {} for every row, null for none, conditions otherwise', async (t) => {
  const roles = fakeRoles({
    viewer: ['app:notes:view'], none: [], owner: ['app:notes:own'], tags: ['app:notes:tags'],
    noDrafts: ['app:notes:view', 'app:notes:no-drafts'], ownNoDrafts: ['app:notes:own', 'app:notes:no-drafts'],
    onlyDrafts: ['app:notes:no-drafts'],
  });
  const factory = new AbilityFactory(new PermissionCatalog([manifest]), roles as unknown as RoleDirectory);
  const f = async (role: string, action = 'read', subject = 'Note') => accessFilter(await factory.for('t1', [role], caller('alice')), action, subject);
  t.same(await f('viewer'), {}, 'unconditional grant: every row');
  t.equal(await f('viewer', 'update'), null, 'no grant for the action: no row');
  t.equal(await f('none'), null, 'no codes: no row');
  t.equal(await f('owner', 'read', 'Tag'), null, 'another subject');
  t.same(await f('owner'), { ownerId: 'alice' });
  t.same(await f('owner', 'update'), { ownerId: 'alice' });
  t.same(await f('tags', 'delete', 'Tag'), {}, 'manage covers every action');
  t.same(await f('noDrafts'), { $not: { status: 'draft' } }, 'an unconditional grant bounded by a cannot');
  t.same(await f('ownNoDrafts'), { $and: [{ ownerId: 'alice' }, { $not: { status: 'draft' } }] });
  t.equal(await f('onlyDrafts'), null, 'a cannot alone grants nothing');
  const noDrafts = await factory.for('t1', ['noDrafts'], caller('alice'));
  t.notOk(noDrafts.can('read', note({ status: 'draft' })));
  t.ok(noDrafts.can('read', note({ status: 'final' })));
});

t.test('role changes take effect after invalidate', async (t) => {
  const roles = fakeRoles({ clerk: ['app:notes:own'] });
  const factory = new AbilityFactory(new PermissionCatalog([manifest]), roles as unknown as RoleDirectory);
  t.same(accessFilter(await factory.for('t1', ['clerk'], caller('alice')), 'read', 'Note'), { ownerId: 'alice' });
  roles.roles.clerk = ['app:notes:view'];
  factory.invalidate('t1');
  const after = await factory.for('t1', ['clerk'], caller('alice'));
  t.same(accessFilter(after, 'read', 'Note'), {});
  t.equal(after, await factory.for('t1', ['clerk'], caller('bob')), 'now shared: no caller values');
});

t.test('through the API: a role gains a code once its tenant is invalidated', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();
  const role = uniqueId('clerk');
  const user = await ctx.user(tenant, { codes: ['erp:catalog:view'], role });
  const product = { sku: 'R-1', name: 'Rake', price: '9.90' };
  t.equal((await ctx.as(user.token, { method: 'GET', url: '/api/products' })).statusCode, 200);
  const denied = await ctx.as(user.token, { method: 'POST', url: '/api/products', payload: product });
  t.equal(denied.statusCode, 403);
  t.equal(denied.json().code, 'FORBIDDEN');

  const tt = ctx.kernel.tenants.cached(tenant.id)!;
  const em = ctx.kernel.dbs.get(tt.connectionKey).em.fork({ schema: tt.schema });
  await em.nativeUpdate(ctx.kernel.model('Role').schema, { name: role }, { permissions: ['erp:catalog:view', 'erp:catalog:manage'] });
  ctx.app.abilities.invalidate(tenant.id);

  const created = await ctx.as(user.token, { method: 'POST', url: '/api/products', payload: product });
  t.equal(created.statusCode, 201, created.body);
  const me = (await ctx.as(user.token, { method: 'GET', url: '/api/auth/me' })).json();
  t.same(me.permissions, ['erp:catalog:manage', 'erp:catalog:view']);

  await em.nativeUpdate(ctx.kernel.model('Role').schema, { name: role }, { permissions: [] });
  ctx.app.abilities.invalidate(tenant.id);
  const gone = await ctx.as(user.token, { method: 'GET', url: '/api/products' });
  t.equal(gone.statusCode, 403, 'and loses them again');
  t.equal(gone.json().code, 'FORBIDDEN');
});
