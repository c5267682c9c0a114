// CORS: off by default; with CORS_ORIGINS, a listed origin's preflight is a 204
// naming the allowed methods and headers (before authentication: a browser's
// preflight carries no token), its answers expose the headers clients read,
// and any other origin gets no CORS header at all. The security headers and
// the request id stay on every answer.
import t from 'tap';
import { build } from '../../helper.ts';
import { loadConfig } from '../../../core/config.ts';

const APP = 'https://app.example.test';
const preflight = (origin: string, url = '/api/products', headers = 'authorization, content-type, x-company-id') => ({
  method: 'OPTIONS' as const,
  url,
  headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': headers },
});
const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((h) => h.startsWith('access-control-'));

t.test('configured origins', async (t) => {
  const ctx = await build(t, { config: { corsOrigins: [APP, 'http://localhost:5173'] } });
  const tenant = await ctx.tenant();

  t.test('a preflight of a listed origin is a 204 naming what the API accepts', async (t) => {
    const res = await ctx.app.inject(preflight(APP));
    t.equal(res.statusCode, 204, res.body);
    t.equal(res.body, '');
    t.equal(res.headers['access-control-allow-origin'], APP);
    const methods = String(res.headers['access-control-allow-methods']).split(/,\s*/);
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) t.ok(methods.includes(m), m);
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    for (const h of ['authorization', 'content-type', 'if-match', 'x-company-id', 'accept-language', 'content-language', 'x-request-id']) t.ok(allowed.includes(h), h);
    t.ok(Number(res.headers['access-control-max-age']) > 0);
    t.notOk(res.headers['access-control-allow-credentials'], 'bearer tokens, no cookies');
    t.match(res.headers.vary, /origin/i, 'caches keep answers per origin');
    t.equal(res.headers['x-content-type-options'], 'nosniff', 'security headers stay');
    t.ok(res.headers['x-request-id'], 'and the request id');
  });

  t.test('any route, a nested one too: the preflight never needs a token', async (t) => {
    for (const url of ['/api/auth/login', '/api/crm/quotes/0190a4c4-0000-7000-8000-000000000000/lines', '/api/meta']) {
      const res = await ctx.app.inject(preflight('http://localhost:5173', url));
      t.equal(res.statusCode, 204, url);
      t.equal(res.headers['access-control-allow-origin'], 'http://localhost:5173', url);
    }
  });

  t.test('answers to a listed origin expose the headers clients read', async (t) => {
    const res = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', headers: { origin: APP }, payload: { sku: 'CORS-1', name: 'Cors', price: '1.00' } });
    t.equal(res.statusCode, 201, res.body);
    t.equal(res.headers['access-control-allow-origin'], APP);
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
    for (const h of ['etag', 'location', 'content-language', 'retry-after', 'x-request-id']) t.ok(exposed.includes(h), h);
    const problem = await ctx.app.inject({ method: 'GET', url: '/api/products', headers: { origin: APP } });
    t.equal(problem.statusCode, 401);
    t.equal(problem.headers['access-control-allow-origin'], APP, 'a refusal is readable by the client too');
  });

  t.test('another origin gets no CORS header, on a preflight or an answer', async (t) => {
    for (const origin of ['https://evil.example.test', 'https://app.example.test.evil.test', 'null', 'HTTPS://APP.EXAMPLE.TEST']) {
      const pre = await ctx.app.inject(preflight(origin));
      t.same(corsHeaders(pre.headers), [], `${origin}: preflight`);
      t.not(pre.statusCode, 204, `${origin}: the preflight fails`);
      t.equal(pre.headers['content-type'], 'application/problem+json; charset=utf-8', 'as a problem document');
      const res = await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/products', headers: { origin } });
      t.equal(res.statusCode, 200);
      t.same(corsHeaders(res.headers), [], `${origin}: answer`);
    }
  });

  t.test('a bare OPTIONS of a listed origin (no requested method) is no 400 text', async (t) => {
    const res = await ctx.app.inject({ method: 'OPTIONS', url: '/api/products', headers: { origin: APP } });
    t.equal(res.statusCode, 204);
  });
});

t.test('"*" lets any origin in', async (t) => {
  const ctx = await build(t, { config: { corsOrigins: ['*'] } });
  const res = await ctx.app.inject(preflight('https://anyone.example.test'));
  t.equal(res.statusCode, 204);
  t.equal(res.headers['access-control-allow-origin'], '*');
});

t.test('off by default: no CORS header, OPTIONS is not a route', async (t) => {
  const ctx = await build(t);
  t.same(ctx.kernel.config.corsOrigins, []);
  const pre = await ctx.app.inject(preflight(APP));
  t.same(corsHeaders(pre.headers), []);
  t.equal(pre.statusCode, 404);
  t.equal(pre.json().code, 'NOT_FOUND');
  const res = await ctx.app.inject({ method: 'GET', url: '/health/live', headers: { origin: APP } });
  t.same(corsHeaders(res.headers), []);
});

t.test('CORS_ORIGINS is checked at start', async (t) => {
  const env = { JWT_SECRET: 'x'.repeat(32), SECRET_KEY: 'y'.repeat(32) };
  t.same(loadConfig({ ...env, CORS_ORIGINS: ' https://a.test , http://localhost:5173 ' }).corsOrigins, ['https://a.test', 'http://localhost:5173']);
  t.same(loadConfig({ ...env, CORS_ORIGINS: 'https://a.test,*' }).corsOrigins, ['*']);
  t.same(loadConfig({ ...env, CORS_ORIGINS: '' }).corsOrigins, []);
  for (const bad of ['https://a.test/', 'https://a.test/app', 'a.test', 'https://A.test', 'not a url']) {
    t.throws(() => loadConfig({ ...env, CORS_ORIGINS: bad }), /CORS_ORIGINS/, bad);
  }
});

t.test('the request id is echoed on every answer', async (t) => {
  const ctx = await build(t);
  const mine = await ctx.app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'trace-42.a' } });
  t.equal(mine.headers['x-request-id'], 'trace-42.a', "the client's own id");
  const odd = await ctx.app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'x'.repeat(65) } });
  t.match(odd.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an over-long id is replaced');
  const injected = await ctx.app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'a b\u00e9' } });
  t.match(injected.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'so is one with odd characters');
  for (const req of [
    { method: 'GET' as const, url: '/api/auth/me' },
    { method: 'GET' as const, url: '/no/such/route' },
    { method: 'GET' as const, url: '/api/products/%E0%A4%A' },
  ]) {
    const res = await ctx.app.inject(req);
    t.ok(res.headers['x-request-id'], `${req.url}: ${res.statusCode}`);
    t.equal(res.headers['x-request-id'], res.json().requestId, 'the same id as the problem document');
  }
});
