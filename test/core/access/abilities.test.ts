// CASL abilities from manifest grants: one ability per set of permission
// codes, shared by every tenant and role set holding them and by every caller (rules keep their caller placeholders; the scope
// compiler binds them per statement, see scope.test.ts), accessFilter merges
// rules into one condition, and role changes take effect once the tenant's
// abilities are invalidated.
import t from 'tap';
import { AbilityFactory, accessFilter } from '../../../core/access/abilities.ts';
import { bind, PermissionCatalog, usesCaller, type CallerValues } from '../../../core/access/permission-catalog.ts';
import type { RoleDirectory } from '../../../core/access/role-directory.ts';
import type { Manifest } from '../../../core/manifest/format.ts';
import { build, uniqueId } from '../../helper.ts';

const manifest: Manifest = {
  id: 'notes',
  name: 'Notes',
  version: '1.0.0',
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
    invalidate() {
      generation++;
    },
    isStale: () => false,
    async resolve(_tenant: string, names: string[]) {
      return { codes: [...new Set(names.flatMap((n) => roles[n] ?? []))], generation };
    },
    async codesFor(tenant: string, names: string[]) {
      return (await dir.resolve(tenant, names)).codes;
    },
  };
  return dir;
}

const caller = (id: string, companyIds: string[] = []): CallerValues => ({ user: { id, companyIds }, company: { id: companyIds[0] ?? null } });

t.test('the permission catalog', async (t) => {
  const catalog = new PermissionCatalog([manifest]);
  t.ok(catalog.has('app:notes:own'));
  t.notOk(catalog.has('app:notes:nope'));
  t.same(catalog.all().sort(), manifest.permissions!.map((p) => p.code).sort());
  t.same(catalog.rules(['app:removed:code']), [], 'unknown codes grant nothing');
  const rules = catalog.rules(['app:notes:own', 'app:notes:company']);
  t.same(
    rules.map((r) => r.conditions),
    [{ ownerId: '${user.id}' }, { companyId: { $in: '${user.companyIds}' } }],
    'rules keep their placeholders',
  );
  t.ok(usesCaller(rules[0].conditions));
  t.notOk(usesCaller(catalog.rules(['app:notes:no-drafts'])[0].conditions));
  t.same(bind(rules[1].conditions, caller('u-1', ['c-1', 'c-2'])), { companyId: { $in: ['c-1', 'c-2'] } });
  t.same(rules[1].conditions, { companyId: { $in: '${user.companyIds}' } }, 'binding leaves the rule alone');
  t.same(catalog.codesGranting('read', 'Note').sort(), ['app:notes:company', 'app:notes:own', 'app:notes:view']);
  t.same(catalog.codesGranting('delete', 'Tag'), ['app:notes:tags'], 'manage grants every action');
});

t.test('one ability per set of codes, holding no caller value', async (t) => {
  const roles = fakeRoles({ owner: ['app:notes:own'], company: ['app:notes:company'], mine: ['app:notes:own'] });
  const factory = new AbilityFactory(new PermissionCatalog([manifest]), roles as unknown as RoleDirectory);
  const a = await factory.for('t1', ['owner']);
  t.equal(a, await factory.for('t1', ['owner']), 'shared');
  t.equal(a, await factory.for('t2', ['owner']), 'by every tenant whose role holds the same codes');
  t.equal(a, await factory.for('t1', ['mine']), 'and by a role of another name with the same codes');
  t.not(a, await factory.for('t1', ['owner', 'company']), 'another set of codes, another ability');
  t.same(factory.sizes, { tenantRoleSets: 4, codeSets: 2 });
  t.ok(a.can('read', 'Note'));
  t.notOk(a.can('delete', 'Note'), 'only the granted actions');
  t.same(accessFilter(a, 'read', 'Note'), { ownerId: '${user.id}' });
  t.equal(accessFilter(a, 'read', 'Note'), accessFilter(a, 'read', 'Note'), 'the same condition object each time: its compiled SQL is cached on it');
  t.same(accessFilter(await factory.for('t1', ['owner', 'company']), 'read', 'Note'), { $or: [{ ownerId: '${user.id}' }, { companyId: { $in: '${user.companyIds}' } }] });
});

t.test('accessFilter: {} for every row, null for none, conditions otherwise', async (t) => {
  const roles = fakeRoles({
    viewer: ['app:notes:view'],
    none: [],
    owner: ['app:notes:own'],
    tags: ['app:notes:tags'],
    noDrafts: ['app:notes:view', 'app:notes:no-drafts'],
    ownNoDrafts: ['app:notes:own', 'app:notes:no-drafts'],
    onlyDrafts: ['app:notes:no-drafts'],
  });
  const factory = new AbilityFactory(new PermissionCatalog([manifest]), roles as unknown as RoleDirectory);
  const f = async (role: string, action = 'read', subject = 'Note') => accessFilter(await factory.for('t1', [role]), action, subject);
  t.same(await f('viewer'), {}, 'unconditional grant: every row');
  t.equal(await f('viewer', 'update'), null, 'no grant for the action: no row');
  t.equal(await f('none'), null, 'no codes: no row');
  t.equal(await f('owner', 'read', 'Tag'), null, 'another subject');
  t.same(await f('owner'), { ownerId: '${user.id}' });
  t.same(await f('owner', 'update'), { ownerId: '${user.id}' });
  t.same(await f('tags', 'delete', 'Tag'), {}, 'manage covers every action');
  t.same(await f('noDrafts'), { $not: { status: 'draft' } }, 'an unconditional grant bounded by a cannot');
  t.same(await f('ownNoDrafts'), { $and: [{ ownerId: '${user.id}' }, { $not: { status: 'draft' } }] });
  t.equal(await f('onlyDrafts'), null, 'a cannot alone grants nothing');
  roles.roles.draftsFirst = ['app:notes:no-drafts', 'app:notes:view'];
  t.same(await f('draftsFirst'), { $not: { status: 'draft' } }, 'whatever the order of the codes');
});

t.test('the caches are bounded: the least recently used tenants go first', async (t) => {
  const roles = fakeRoles({ owner: ['app:notes:own'] });
  const factory = new AbilityFactory(new PermissionCatalog([manifest]), roles as unknown as RoleDirectory, { tenants: 3, codeSets: 2 });
  const first = await factory.for('t0', ['owner']);
  for (let i = 1; i < 50; i++) t.equal(await factory.for(`t${i}`, ['owner']), first, `tenant ${i} shares it`);
  t.same(factory.sizes, { tenantRoleSets: 3, codeSets: 1 }, 'three tenants kept, one ability');
  for (const codes of [['app:notes:view'], ['app:notes:tags'], ['app:notes:own', 'app:notes:tags']]) factory.forCodes(codes);
  t.equal(factory.sizes.codeSets, 2, 'at most two sets of codes');
});

t.test('role changes take effect after invalidate', async (t) => {
  const roles = fakeRoles({ clerk: ['app:notes:own'] });
  const factory = new AbilityFactory(new PermissionCatalog([manifest]), roles as unknown as RoleDirectory);
  t.same(accessFilter(await factory.for('t1', ['clerk']), 'read', 'Note'), { ownerId: '${user.id}' });
  roles.roles.clerk = ['app:notes:view'];
  factory.invalidate('t1');
  t.same(accessFilter(await factory.for('t1', ['clerk']), 'read', 'Note'), {});
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
  await em.nativeUpdate(ctx.kernel.model('Role').ormEntity, { name: role }, { permissions: ['erp:catalog:view', 'erp:catalog:manage'] });
  ctx.app.abilities.invalidate(tenant.id);

  const created = await ctx.as(user.token, { method: 'POST', url: '/api/products', payload: product });
  t.equal(created.statusCode, 201, created.body);
  const me = (await ctx.as(user.token, { method: 'GET', url: '/api/auth/me' })).json();
  t.same(me.permissions, ['erp:catalog:manage', 'erp:catalog:view']);

  await em.nativeUpdate(ctx.kernel.model('Role').ormEntity, { name: role }, { permissions: [] });
  ctx.app.abilities.invalidate(tenant.id);
  const gone = await ctx.as(user.token, { method: 'GET', url: '/api/products' });
  t.equal(gone.statusCode, 403, 'and loses them again');
  t.equal(gone.json().code, 'FORBIDDEN');
});
