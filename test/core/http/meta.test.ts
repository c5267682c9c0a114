// GET /api/meta: the loaded modules, the entities and fields the caller may
// read, and the menu entries whose pages open for them; derived from the
// manifests and the caller's ability, so a catalog viewer sees the catalog and
// nothing else.
import t from 'tap';
import { build } from '../../helper.ts';
import { manifestsWith } from '../../support/manifests.ts';

const manifestsDir = manifestsWith(t, {
  'probe.json': {
    id: 'probe',
    name: 'Probe',
    version: '1.2.3',
    dependsOn: ['catalog'],
    permissions: [
      {
        code: 'probe:products:public',
        description: "products' public fields only",
        grants: [{ action: 'read', subject: 'Product', fields: ['sku', 'name', 'price'] }],
      },
    ],
    menu: [{ label: 'Price list', path: '/probe/prices', permission: 'probe:products:public' }],
  },
});

const ctx = await build(t, { config: { manifestsDir } });
const tenant = await ctx.tenant();
const meta = (token: string, headers: Record<string, string> = {}, url = '/api/meta') => ctx.as(token, { method: 'GET', url, headers });
type Entity = { name: string; path: string | null; actions: string[]; listColumns: string[]; fields: { name: string; widget: string; readOnly: boolean; writeOnly: boolean }[] };
type Menu = { module: string; path: string; permission: string };

t.test('an administrator sees every module, readable entity and menu entry', async (t) => {
  const res = await meta(tenant.adminToken);
  t.equal(res.statusCode, 200, 'GET /api/meta answers');
  const body = res.json();
  t.same(
    body.modules.map((m: { id: string }) => m.id),
    ctx.kernel.modules.map((m) => m.manifest.id),
  );
  t.match(
    body.modules.find((m: { id: string }) => m.id === 'probe'),
    { name: 'Probe', version: '1.2.3', description: null },
  );
  const menu = body.menu as Menu[];
  t.equal(menu.length, ctx.kernel.modules.flatMap((m) => m.manifest.menu ?? []).length, 'every menu entry');
  t.ok(menu.some((e) => e.path === '/dashboard' && e.module === 'core'));
  const entities = new Map((body.entities as Entity[]).map((e) => [e.name, e]));
  const product = entities.get('Product')!;
  t.equal(product.path, '/api/products');
  t.same(product.actions, ['read', 'create', 'update', 'delete']);
  t.ok(product.fields.some((f) => f.name === 'stock'));
  t.notOk(entities.has('RefreshToken'), 'entities no code grants stay out');
  t.notOk(entities.has('UserCompany'));
  const email = entities.get('EmailAccount')!;
  t.match(
    email.fields.find((f) => f.name === 'password'),
    { writeOnly: true },
    'a secret field is listed as write-only',
  );
  const user = entities.get('User')!;
  t.notOk(
    user.fields.some((f) => f.name === 'passwordHash'),
    'internal fields never show',
  );
  t.match(
    entities.get('Company')!.fields.find((f) => f.name === 'isActive'),
    { widget: 'checkbox', readOnly: false },
  );
});

t.test('a catalog viewer sees the catalog only, read-only', async (t) => {
  const viewer = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
  const body = (await meta(viewer.token)).json();
  t.same((body.entities as Entity[]).map((e) => e.name).sort(), ['Category', 'Product']);
  for (const e of body.entities as Entity[]) t.same(e.actions, ['read'], e.name);
  t.same(
    (body.menu as Menu[]).map((e) => e.permission),
    ['erp:catalog:view', 'erp:catalog:view'],
  );
  t.equal(body.modules.length, ctx.kernel.modules.length, 'the modules list is no secret');
});

t.test('field rules hide fields, and list columns with them', async (t) => {
  const clerk = await ctx.user(tenant, { codes: ['probe:products:public'] });
  const body = (await meta(clerk.token)).json();
  const product = (body.entities as Entity[]).find((e) => e.name === 'Product')!;
  t.same(
    product.fields.map((f) => f.name),
    ['sku', 'name', 'price'],
  );
  t.same(product.listColumns, ['sku', 'name', 'price'], 'isActive is hidden');
  t.same(
    (body.menu as Menu[]).map((e) => e.path),
    ['/probe/prices'],
  );
});

t.test("the menu holds an entry only when its page's route lets the caller in, not only their code", async (t) => {
  // the view codes of admin-protected areas (the entity's routes: "admin"; the dashboard's entry: "admin"), and one more
  const clerk = await ctx.user(tenant, { codes: ['core:company:view', 'core:email:view', 'core:dashboard:view', 'core:organization:view'] });
  const theirs = ((await meta(clerk.token)).json().menu as Menu[]).map((e) => e.path);
  t.same(theirs, ['/organizations'], 'no Dashboard, no Companies, no E-mail accounts');
  const admins = (await meta(tenant.adminToken)).json().menu as (Menu & { admin: boolean })[];
  for (const path of ['/dashboard', '/companies', '/emails'])
    t.match(
      admins.find((e) => e.path === path),
      { admin: true },
      `an administrator has ${path}`,
    );
  t.match(
    admins.find((e) => e.path === '/organizations'),
    { admin: false },
  );
});

t.test('a user without codes sees modules but no entity and no menu', async (t) => {
  const nobody = await ctx.user(tenant, { codes: [] });
  const res = await meta(nobody.token);
  t.equal(res.statusCode, 200);
  t.same(res.json().entities, []);
  t.same(res.json().menu, []);
});

t.test('refusals', async (t) => {
  const anonymous = await ctx.app.inject({ method: 'GET', url: '/api/meta' });
  t.equal(anonymous.statusCode, 401);
  t.equal(anonymous.json().code, 'UNAUTHENTICATED');
  const forged = await meta(`${tenant.adminToken}x`);
  t.equal(forged.json().code, 'UNAUTHENTICATED');
  const unknownParam = await meta(tenant.adminToken, {}, '/api/meta?all=true');
  t.equal(unknownParam.statusCode, 400);
  t.equal(unknownParam.json().code, 'VALIDATION_FAILED');
  const badCompany = await meta(tenant.adminToken, { 'x-company-id': 'not-a-uuid' });
  t.equal(badCompany.statusCode, 400);
  const other = await ctx.tenant();
  const foreign = await meta(tenant.adminToken, { 'x-company-id': other.companyId });
  t.equal(foreign.statusCode, 403);
  t.equal(foreign.json().code, 'COMPANY_FORBIDDEN');
});

t.test('the OpenAPI document names the response', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const op = doc.paths['/api/meta'].get;
  t.equal(op.operationId, 'metaGetMetadata');
  t.equal(op.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Meta');
  t.ok(op.responses['200'].description);
  t.ok(doc.components.schemas.Meta);
});
