// Every core route of the seed (sections 4.4 to 4.6) is in the generated
// OpenAPI document with the kernel's conventions: admin-protected routes
// document ADMIN_REQUIRED and ROLE_REQUIRED, lists the paged shape.
import t from 'tap';
import { build } from '../../helper.ts';

const ctx = await build(t);
const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();

t.test("the seed's core routes are documented", async (t) => {
  const seed: [string, string][] = [
    ['get', '/api/companies'],
    ['get', '/api/organizations'],
    ['get', '/api/users'],
    ['get', '/api/groups'],
    ['get', '/api/auth/db'],
    ['get', '/api/companies/{id}'],
    ['post', '/api/companies'],
    ['patch', '/api/companies/{id}'],
    ['delete', '/api/companies/{id}'],
    ['get', '/api/emails'],
    ['get', '/api/emails/company/{companyId}'],
    ['get', '/api/emails/{id}'],
    ['post', '/api/emails'],
    ['patch', '/api/emails/{id}'],
    ['delete', '/api/emails/{id}'],
  ];
  t.same(
    seed.filter(([m, p]) => !doc.paths[p]?.[m]).map(([m, p]) => `${m} ${p}`),
    [],
    'every seed route',
  );
  const ids = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>)
    .filter(([p]) => /^\/api\/(companies|organizations|users|groups|group-members|roles|emails)/.test(p))
    .flatMap(([, item]) => Object.values(item).map((op) => op.operationId));
  t.ok(ids.length >= 40, `${ids.length} core operations`);
  t.same(
    ids.filter((id) => !/^core[A-Z]/.test(id)),
    [],
    'module-prefixed operationIds',
  );
  // nouns come from the entity (EmailAccount), not from the seed's URL (/api/emails)
  t.equal(doc.paths['/api/emails'].get.operationId, 'coreListEmailAccounts');
  t.equal(doc.paths['/api/emails/company/{companyId}'].get.operationId, 'coreListEmailAccountsByCompany');
  t.equal(doc.paths['/api/users'].post.operationId, 'coreCreateUser');
});

t.test('admin routes document the three checks; lists the paged shape', async (t) => {
  for (const path of ['/api/companies', '/api/emails', '/api/roles']) {
    const text = doc.paths[path].get.responses['403'].description as string;
    for (const code of ['ROLE_REQUIRED', 'ADMIN_REQUIRED', 'FORBIDDEN']) t.ok(text.includes(`(${code})`), `${path} names ${code}`);
    t.ok(doc.paths[path].get.responses['401'], `${path} 401`);
  }
  for (const [path, list] of [
    ['/api/companies', 'CoreCompanyList'],
    ['/api/organizations', 'CoreOrganizationList'],
    ['/api/users', 'CoreUserList'],
    ['/api/groups', 'CoreGroupList'],
  ]) {
    t.equal(doc.paths[path].get.responses['200'].content['application/json'].schema.$ref, `#/components/schemas/${list}`);
    const params = doc.paths[path].get.parameters.map((p: { name: string }) => p.name);
    for (const name of ['page', 'size', 'sort', 'isActive']) t.ok(params.includes(name), `${path} takes ${name}`);
  }
  t.same(doc.components.schemas.AuthDatabaseSize.required.sort(), ['schemas', 'scope', 'totalBytes']);
  t.notOk('passwordHash' in doc.components.schemas.CoreUser.properties, 'no password hash in the user shape');
  t.notOk('builtIn' in doc.components.schemas.CoreRoleCreate.properties, 'builtIn is read-only');
  for (const shape of ['CoreRole', 'CoreRoleCreate', 'CoreRolePatch']) {
    t.match(doc.components.schemas[shape].properties.permissions, { type: ['array', 'null'], items: { type: 'string' } }, `${shape}: permissions are codes or null`);
  }
  t.ok('builtIn' in doc.components.schemas.CoreRole.properties);
});
