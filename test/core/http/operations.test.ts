// Running it: health checks, one log line per request, no credential in any
// log line, 500s that leak nothing, and a graceful stop on SIGTERM.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loggerOptions, REDACT } from '../../../core/logging.ts';
import { build, onPglite, PASSWORD, TEST_DATABASE_URL, type TestContext } from '../../helper.ts';

type Line = Record<string, any>;

function capture() {
  const lines: Line[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l));
      }
      cb();
    },
  });
  return { stream, lines, raw, text: () => raw.join('\n') };
}

t.test('health', async (t) => {
  const ctx = await build(t);
  for (const url of ['/health/live', '/health/ready']) {
    const res = await ctx.app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 200, url);
    t.same(res.json(), { status: 'ok' });
  }
  // a pool that answers nothing while the server accepts fresh connections (or,
  // embedded, while the in-process database is stuck): not ready, and not live
  const orm = ctx.kernel.dbs.main;
  const original = orm.em.getConnection.bind(orm.em);
  orm.em.getConnection = (() => ({ execute: () => new Promise(() => undefined) })) as never;
  try {
    const started = Date.now();
    const down = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
    t.equal(down.statusCode, 503, 'not ready while a database does not answer');
    t.equal(down.json().code, 'DATABASE_UNAVAILABLE');
    t.equal(down.headers['retry-after'], '5');
    t.ok(Date.now() - started < 10_000, 'the probe gives up instead of hanging');
    const live = await ctx.app.inject({ method: 'GET', url: '/health/live' });
    t.equal(live.statusCode, 503, 'a wedged pool fails liveness: only a restart helps');
    t.equal(live.json().code, 'SERVICE_UNAVAILABLE');
  } finally {
    orm.em.getConnection = original as never;
  }
  t.equal((await ctx.app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200, 'live again once the pool answers');
});

t.test('every request logs one line with request id, tenant and user', async (t) => {
  const log = capture();
  const ctx = await build(t, { logger: { level: 'info', stream: log.stream } });
  const tenant = await ctx.tenant();
  const me = (await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/auth/me' })).json();
  log.lines.length = 0;

  const requests: [string, Promise<{ statusCode: number }>][] = [
    ['rid-me-1', ctx.as(tenant.adminToken, { method: 'GET', url: '/api/auth/me', headers: { 'x-request-id': 'rid-me-1' } })],
    ['rid-list-2', ctx.as(tenant.adminToken, { method: 'GET', url: '/api/products?search=secret-query', headers: { 'x-request-id': 'rid-list-2' } })],
    ['rid-anon-3', ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: { 'x-request-id': 'rid-anon-3' } })],
    ['rid-404-4', ctx.app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'rid-404-4' } })],
    ['rid-live-5', ctx.app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'rid-live-5' } })],
  ];
  const statuses = await Promise.all(requests.map(([, p]) => p.then((r) => r.statusCode)));
  const requestLines = log.lines.filter((l) => l.msg === 'request');
  t.equal(requestLines.length, requests.length, 'one line per request');
  requests.forEach(([id], i) => {
    const mine = requestLines.filter((l) => l.reqId === id);
    t.equal(mine.length, 1, `one line for ${id}`);
    t.equal(mine[0]?.status, statuses[i], `${id} has its status`);
    t.ok('tenant' in (mine[0] ?? {}) && 'user' in (mine[0] ?? {}), `${id} names tenant and user`);
  });
  const authed = requestLines.find((l) => l.reqId === 'rid-me-1')!;
  t.match(authed, { level: 30, method: 'GET', url: '/api/auth/me', status: 200, tenant: tenant.id, user: me.id });
  t.equal(requestLines.find((l) => l.reqId === 'rid-list-2')!.url, '/api/products', 'no query string');
  t.match(
    requestLines.find((l) => l.reqId === 'rid-anon-3'),
    { status: 401, tenant: null, user: null },
  );

  const other = await ctx.tenant();
  await ctx.kernel.tenants.setStatus(other.id, 'suspended');
  await ctx.as(other.adminToken, { method: 'GET', url: '/api/auth/me', headers: { 'x-request-id': 'rid-suspended-6' } });
  t.match(
    log.lines.find((l) => l.reqId === 'rid-suspended-6'),
    { status: 403, tenant: other.id },
    'a refused request names its tenant',
  );

  const generated = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: { 'x-request-id': 'not a valid id!' } });
  const rid = generated.json().requestId;
  t.not(rid, 'not a valid id!', 'an unusable request id is replaced');
  t.equal(log.lines.filter((l) => l.reqId === rid).length, 1);
});

t.test('no credential ever appears in a log line', async (t) => {
  const log = capture();
  const ctx = await build(t, { logger: { level: 'trace', stream: log.stream } });
  const tenant = await ctx.tenant();
  const wrongPassword = 'my-wrong-password-1234';
  const bad = await ctx.login(tenant.id, tenant.adminEmail, wrongPassword);
  t.equal(bad.statusCode, 401);
  const badBody = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD, extra: PASSWORD } });
  t.equal(badBody.statusCode, 400);
  const login = await ctx.login(tenant.id, tenant.adminEmail, PASSWORD);
  const { accessToken, refreshToken } = login.json();
  const refreshed = (await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken } })).json();
  const reused = await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken } });
  t.equal(reused.json().code, 'TOKEN_REUSED');
  await ctx.as(refreshed.accessToken, { method: 'GET', url: '/api/auth/me' });
  await ctx.as(`${refreshed.accessToken}x`, { method: 'GET', url: '/api/auth/me' });
  const relogin = (await ctx.login(tenant.id, tenant.adminEmail, PASSWORD)).json();
  const out = await ctx.as(relogin.accessToken, { method: 'POST', url: '/api/auth/logout', payload: { refreshToken: relogin.refreshToken } });
  t.equal(out.statusCode, 204);

  t.ok(log.lines.filter((l) => l.msg === 'request').length >= 9, 'the sequence was logged');
  const text = log.text();
  const secrets: [string, string][] = [
    ['password', PASSWORD],
    ['wrong password', wrongPassword],
    ['JWT secret', ctx.kernel.config.jwtSecret],
    ['access token', accessToken],
    ['access token signature', accessToken.split('.')[2]],
    ['refresh token', refreshToken],
    ['refresh token secret part', refreshToken.split('.')[1]],
    ['rotated access token', refreshed.accessToken],
    ['rotated refresh token', refreshed.refreshToken],
    ['logged out refresh token', relogin.refreshToken],
    ['tenant admin token', tenant.adminToken.split('.')[2]],
  ];
  for (const [name, secret] of secrets) t.notOk(text.includes(secret), `no ${name} in the log`);
});

t.test('logger options merge extras and always keep the redaction', async (t) => {
  const stream = new Writable();
  const opts = loggerOptions('silent', { level: 'debug', stream, redact: ['req.body.pin'] }) as Record<string, any>;
  t.equal(opts.level, 'debug');
  t.equal(opts.stream, stream);
  t.same(opts.redact.paths, [...REDACT, 'req.body.pin']);
  t.same(loggerOptions('warn', true), { level: 'warn', redact: { paths: REDACT, censor: '[redacted]' } });

  const log = capture();
  const ctx = await build(t, { logger: { level: 'info', stream: log.stream } });
  ctx.app.log.info({ body: { email: 'a@b.c', password: 'hunter2-secret' }, tokens: { refreshToken: 'rt-secret', accessToken: 'at-secret' } }, 'probe');
  const line = log.lines.find((l) => l.msg === 'probe')!;
  t.equal(line.body.password, '[redacted]');
  t.equal(line.body.email, 'a@b.c');
  t.notOk(/hunter2-secret|rt-secret|at-secret/.test(log.text()));
});

t.test('an unhandled error is a 500 INTERNAL that leaks nothing', async (t) => {
  const log = capture();
  const ctx = await build(t, { logger: { level: 'info', stream: log.stream } });
  const tenant = await ctx.tenant();

  const assertOpaque = (t: Test, res: { statusCode: number; headers: Record<string, unknown>; body: string; json(): any }, leaks: string[]) => {
    t.equal(res.statusCode, 500);
    t.match(res.headers['content-type'], /^application\/problem\+json/);
    const body = res.json();
    t.equal(body.code, 'INTERNAL');
    t.equal(body.status, 500);
    t.type(body.requestId, 'string');
    t.notOk(/\bat .+:\d+:\d+/.test(res.body), 'no stack');
    for (const leak of leaks) t.notOk(res.body.toLowerCase().includes(leak.toLowerCase()), `body does not contain ${leak}`);
    return body.requestId as string;
  };

  t.test('a thrown error', async (t) => {
    const find = ctx.kernel.tenants.find;
    ctx.kernel.tenants.find = async () => {
      throw new Error('boom: select password_hash from users /srv/secret.ts');
    };
    try {
      const res = await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/auth/me' });
      const rid = assertOpaque(t, res, ['boom', 'password_hash', 'select', 'secret.ts']);
      t.ok(
        log.lines.some((l) => l.reqId === rid && l.level === 50),
        'logged as an error',
      );
    } finally {
      ctx.kernel.tenants.find = find;
    }
  });

  t.test('a database error', async (t) => {
    await dropProducts(ctx, tenant.schema);
    const res = await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/products' });
    const rid = assertOpaque(t, res, ['select', 'relation', 'catalog_products', tenant.schema]);
    const errorLine = log.lines.find((l) => l.reqId === rid && l.level === 50);
    t.ok(errorLine, 'logged as an error');
    t.notOk(/\bselect\b/i.test(JSON.stringify(errorLine)), 'the log line holds no SQL');
  });
});

async function dropProducts(ctx: TestContext, schema: string) {
  const table = ctx.kernel.model('Product').ormEntity.meta.tableName;
  await ctx.kernel.dbs.main.em.getConnection().execute(`drop table "${schema}"."${table}" cascade`);
}

t.test('SIGTERM stops the server gracefully', { skip: onPglite && 'starts a server on PostgreSQL' }, async (t) => {
  // A database of its own: start migrates every outdated tenant it finds, and
  // must not touch the tenants of test files running in parallel.
  const ctx = await build(t);
  const db = `plinth_start_${randomBytes(4).toString('hex')}`;
  const admin = ctx.kernel.dbs.main.em.getConnection();
  await admin.execute(`create database ${db}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-start-'));
  t.teardown(async () => {
    await admin.execute(`drop database if exists ${db} with (force)`);
    rmSync(dataDir, { recursive: true, force: true });
  });
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${db}`;
  const jwtSecret = randomBytes(32).toString('hex');
  const operatorPassword = `op-${randomBytes(8).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: url.href,
    PORT: '0',
    HOST: '127.0.0.1',
    DEMO_DATA: 'false',
    JWT_SECRET: jwtSecret,
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
    PLATFORM_ADMIN_EMAIL: 'ops@platform.test',
    PLATFORM_ADMIN_PASSWORD: operatorPassword,
    PROVISION_SPARES: '0',
  };
  const child = spawn(join(process.cwd(), 'node_modules/.bin/node'), ['scripts/start.ts'], { env, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  const ready = await new Promise<Line | undefined>((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      const line = lines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('Plinth ready'));
      if (line) resolve(line);
    });
    void exited.then(() => resolve(undefined));
  });
  if (!ready) return t.fail(`the server did not start: ${stderr}${stdout}`);
  t.type(ready.port, 'number', 'the ready line names the port');
  t.not(ready.port, 0, 'the port actually bound');
  const base = `http://127.0.0.1:${ready.port}`;
  t.match(ready.msg, base, 'and the docs address');

  const health = await fetch(`${base}/health/ready`);
  t.equal(health.status, 200);
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'platform', email: 'ops@platform.test', password: operatorPassword }),
  });
  t.equal(login.status, 200, 'the configured platform operator can log in');
  const { accessToken } = (await login.json()) as { accessToken: string };

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exits 0');
  const all = lines();
  t.ok(
    all.some((l) => l.msg?.startsWith('stopping') && l.signal === 'SIGTERM'),
    'logs the stop',
  );
  t.ok(
    all.some((l) => l.msg === 'request' && l.url === '/api/auth/login' && l.status === 200),
    'and the requests it served',
  );
  for (const secret of [jwtSecret, operatorPassword, accessToken]) t.notOk(stdout.includes(secret) || stderr.includes(secret), 'no secret in the output');
  t.equal(stderr.trim(), '', 'nothing on stderr');
});
