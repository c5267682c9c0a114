// A module's own authenticator (an API key here): its route accepts only its
// credentials, user tokens are refused there and its credentials everywhere
// else; the principal it names gets an ability from its roles and the same
// scoped data access as a user; OpenAPI documents its security scheme.
import t from 'tap';
import { build } from '../../helper.ts';
import { modulesWith, SDK_URL } from '../../support/manifests.ts';

// the shipped modules and the probe: a route that accepts only its own key
const { manifestsDir, pluginsDir } = modulesWith(t, {
  probe: {
    manifest: {
      name: 'Probe',
      routes: [{ method: 'GET', path: '/api/probe/whoami', handler: 'whoami', summary: 'who the key names', auth: 'probe-key', access: { action: 'read', subject: 'Product' } }],
    },
    plugin: `
import { handler, httpError, Type } from '${SDK_URL}';
// "<tenant>:<role>:<secret>"; the role must exist in the tenant (looked up with system access)
export const authenticators = {
  'probe-key': {
    scheme: { type: 'apiKey', in: 'header', name: 'x-probe-key' },
    async authenticate(request, system) {
      const key = request.headers['x-probe-key'];
      if (typeof key !== 'string') return null;
      const [tenantId, role, secret] = key.split(':');
      if (secret !== 'open-sesame') throw httpError('UNAUTHENTICATED', 'unknown key');
      const ctx = await system(tenantId);
      const [company] = await ctx.data('Company').find({}, { limit: 1 });
      return { tenantId, principal: { kind: 'client', id: 'client-1', roles: [role], companyIds: [company.id] } };
    },
  },
};
export const handlers = {
  whoami: handler({ response: { 200: Type.Object({ kind: Type.String(), id: Type.String(), products: Type.Integer() }) } }, async (ctx) =>
    ({ kind: ctx.principal.kind, id: ctx.principal.id, products: await ctx.data('Product').count() })),
};
`,
  },
});

const ctx = await build(t, { config: { manifestsDir, pluginsDir } });
const tenant = await ctx.tenant();
await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'K-1', name: 'Key', price: '1.00' } });
const viewer = await ctx.user(tenant, { codes: ['erp:catalog:view'], role: 'viewer' });
const withKey = (key: string, url = '/api/probe/whoami') => ctx.app.inject({ method: 'GET', url, headers: { 'x-probe-key': key } });

t.test("the route takes its authenticator's principal", async (t) => {
  const res = await withKey(`${tenant.id}:viewer:open-sesame`);
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), { kind: 'client', id: 'client-1', products: 1 }, 'scoped data access for a client');
});

t.test('and only that', async (t) => {
  t.equal((await withKey(`${tenant.id}:viewer:wrong`)).statusCode, 401, 'a wrong key');
  const user = await ctx.as(viewer.token, { method: 'GET', url: '/api/probe/whoami' });
  t.equal(user.statusCode, 401, 'a user token is refused on a client route');
  t.equal((await withKey(`${tenant.id}:viewer:open-sesame`, '/api/products')).statusCode, 401, 'a key is refused on user routes');
  const none = await withKey(`${tenant.id}:member:open-sesame`);
  t.equal(none.statusCode, 403, "a client whose roles lack the route's permission");
  t.equal(none.json().code, 'FORBIDDEN');
  t.equal((await withKey('no-such-tenant:viewer:open-sesame')).statusCode, 401, 'an unknown tenant');
});

t.test('OpenAPI documents the scheme', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  t.same(doc.components.securitySchemes['probe-key'], { type: 'apiKey', in: 'header', name: 'x-probe-key' });
  t.same(doc.paths['/api/probe/whoami'].get.security, [{ 'probe-key': [] }]);
});
