// Security headers on every response, refusals and router errors included;
// token responses are never cached; the Swagger UI page loads nothing its
// Content-Security-Policy forbids.
import t from 'tap';
import type { InjectOptions } from 'fastify';
import { build, PASSWORD } from '../../helper.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();

/** "default-src 'self';img-src 'self' data:" → { 'default-src': ["'self'"], 'img-src': ["'self'", 'data:'] } */
const policy = (header: unknown) =>
  Object.fromEntries(
    String(header)
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => {
        const [name, ...values] = d.split(/\s+/);
        return [name.toLowerCase(), values];
      }),
  );
const allows = (p: Record<string, string[]>, directive: string, source: string) => (p[directive] ?? p['default-src'] ?? []).includes(source);

t.test('every response carries the security headers', async (t) => {
  const requests: [string, InjectOptions][] = [
    ['200 JSON', { method: 'GET', url: '/health/live' }],
    ['200 authenticated', { method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${tenant.adminToken}` } }],
    ['401', { method: 'GET', url: '/api/auth/me' }],
    ['404', { method: 'GET', url: '/no/such/route' }],
    ['400 body', { method: 'POST', url: '/api/auth/login', payload: { tenant: 'x' } }],
    ['415', { method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'text/plain' }, payload: 'hello' }],
    ['400 router error', { method: 'GET', url: '/api/products/%E0%A4%A' }],
    ['HTML page', { method: 'GET', url: '/api-docs' }],
  ];
  for (const [name, request] of requests) {
    const res = await ctx.app.inject(request);
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${name} (${res.statusCode}): nosniff`);
    t.equal(res.headers['x-frame-options'], 'SAMEORIGIN', `${name}: framing`);
    t.equal(res.headers['referrer-policy'], 'no-referrer', `${name}: referrer`);
    t.match(res.headers['strict-transport-security'], /max-age=\d+/, `${name}: HSTS`);
    const csp = policy(res.headers['content-security-policy']);
    t.same(csp['frame-ancestors'], ["'self'"], `${name}: CSP frame-ancestors`);
    t.notOk('upgrade-insecure-requests' in csp, `${name}: plain-HTTP local starts keep working`);
    if (name === 'HTML page') {
      t.equal(res.headers['cross-origin-opener-policy'], 'same-origin', `${name}: COOP`);
      t.same(csp['object-src'], ["'none'"], `${name}: the page CSP`);
    } else {
      t.same(csp['default-src'], ["'none'"], `${name}: an API answer loads nothing`);
    }
  }
});

t.test('token responses are not cached', async (t) => {
  const login = await ctx.login(tenant.id, tenant.adminEmail, PASSWORD);
  t.equal(login.statusCode, 200);
  t.equal(login.headers['cache-control'], 'no-store', 'login');
  t.equal(login.headers.pragma, 'no-cache', 'login');
  const refresh = await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: login.json().refreshToken } });
  t.equal(refresh.statusCode, 200);
  t.equal(refresh.headers['cache-control'], 'no-store', 'refresh');
  t.equal(refresh.headers.pragma, 'no-cache', 'refresh');
});

t.test('Swagger UI loads only what its CSP allows', async (t) => {
  for (const base of ['/api-docs', '/api-docs/']) {
    const page = await ctx.app.inject({ method: 'GET', url: base });
    t.equal(page.statusCode, 200, base);
    t.match(page.headers['content-type'], /^text\/html/);
    const csp = policy(page.headers['content-security-policy']);
    const html = page.body;
    t.notOk(/<script(?![^>]*\ssrc=)[^>]*>/i.test(html), `${base}: no inline script (script-src has no 'unsafe-inline')`);
    t.notOk(/\son[a-z]+\s*=/i.test(html), `${base}: no inline event handler (script-src-attr 'none')`);
    t.notOk(/<style/i.test(html) && !allows(csp, 'style-src', "'unsafe-inline'"), `${base}: inline styles only where allowed`);
    const scripts = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]);
    const styles = [...html.matchAll(/<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
    const icons = [...html.matchAll(/<link[^>]*rel="icon"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
    t.ok(scripts.length >= 3 && styles.length >= 1, `${base}: the page names its scripts and styles`);
    t.ok(allows(csp, 'script-src', "'self'") && allows(csp, 'style-src', "'self'") && allows(csp, 'img-src', "'self'"), 'same-origin scripts, styles, images');
    for (const [kind, urls, type] of [
      ['script', scripts, /javascript/],
      ['style', styles, /text\/css/],
      ['icon', icons, /image\//],
    ] as const) {
      for (const ref of urls) {
        t.notOk(/^[a-z]+:|^\/\//i.test(ref), `${kind} ${ref} is same-origin`);
        const url = new URL(ref, `http://localhost${base}`).pathname;
        const res = await ctx.app.inject({ method: 'GET', url });
        t.equal(res.statusCode, 200, `${kind} ${url} loads`);
        t.match(res.headers['content-type'], type, `${kind} ${url} content type`);
        t.equal(res.headers['x-content-type-options'], 'nosniff', `${url}: nosniff (so the content type must be right)`);
      }
    }
  }
  const init = await ctx.app.inject({ method: 'GET', url: '/api-docs/static/swagger-initializer.js' });
  t.equal(init.statusCode, 200);
  // a script runs under the policy of the page that loads it
  const csp = policy((await ctx.app.inject({ method: 'GET', url: '/api-docs' })).headers['content-security-policy']);
  t.ok(!init.body.includes('data:') || allows(csp, 'img-src', 'data:'), 'the logo is a data: URL, which img-src allows');
  const code = init.body.replace(/data:[^'"]+/g, '').replace(/^\s*\/\/.*$/gm, ''); // not the logo, not comments
  t.notOk(/https?:\/\//.test(code), 'the initializer fetches nothing from another origin');
  t.ok(allows(csp, 'connect-src', "'self'"), 'the UI fetches /api-docs/json from its own origin');
  const spec = await ctx.app.inject({ method: 'GET', url: '/api-docs/json' });
  t.equal(spec.statusCode, 200);
  t.equal(spec.json().openapi, '3.1.0');
});
