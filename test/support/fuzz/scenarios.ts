// Fuzz scenarios beyond one request per operation: methods a path lacks (405
// with Allow), concurrent reuse of one refresh token, and what the HTTP layer
// itself refuses before any route runs (over a real socket: light-my-request
// skips the parser).
import fc from 'fast-check';
import { connect } from 'node:net';
import { PASSWORD } from '../../helper.ts';
import type { Api } from '../api/describe.ts';
import { contractBreach } from '../api/oracle.ts';
import type { Recorder } from './recorder.ts';
import type { FuzzRequest } from './requests.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Methods no route declares: answered by the framework (HEAD mirrors GET); never a 5xx, never a non-problem error. */
const OTHER_METHODS = ['HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'CONNECT'];

/** Paths of the given groups; a path with a generated operation answers 405 with Allow for the methods it lacks. */
export async function missingMethods(rec: Recorder, api: Api, groups: Set<string>, runs: number, seed: number): Promise<void> {
  const { a } = rec.world;
  const paths = [...new Set(api.ops.filter((o) => groups.has(o.group)).map((o) => o.path))];
  for (const [i, path] of paths.entries()) {
    const declared = api.ops.filter((o) => o.path === path).map((o) => o.method);
    const missing = METHODS.filter((m) => !declared.includes(m));
    if (!missing.length) continue;
    const generated = api.ops.some((o) => o.path === path && o.kind !== 'custom' && o.kind !== 'kernel');
    const name = `${missing.join('/')} ${path}`;
    const arb = fc
      .record({
        fault: fc.constant<FuzzRequest['fault']>('none'),
        method: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...missing) }, fc.constantFrom(...OTHER_METHODS)),
        path: fc.oneof(fc.constant(a.companyId), fc.uuid()).map((id) => path.replace(/\{[^}]+\}/g, id)),
        query: fc.constantFrom('', 'page=2', 'x=%00'),
        headers: fc.constant({}),
        caller: fc.constantFrom('admin' as const, 'none' as const),
        body: fc.option(fc.constantFrom({ text: '{}', type: 'application/json' }, { text: 'x', type: 'text/plain' }), { nil: undefined }),
      })
      .map(({ caller, ...r }) => ({ ...r, caller, ...(caller === 'admin' ? { token: rec.world.tokens.admin } : {}) }) as FuzzRequest);
    await fc.check(
      fc.asyncProperty(arb, async (req) => {
        const res = await rec.send(name, req);
        if (OTHER_METHODS.includes(req.method)) return true;
        const allow = String(res.headers.allow ?? '')
          .split(', ')
          .sort()
          .join(', ');
        // a body the parser refuses, or a query string no route takes, fails first
        if (generated && req.body?.type !== 'text/plain' && !req.query.includes('%00') && (res.statusCode !== 405 || allow !== [...declared].sort().join(', '))) {
          rec.note(name, `expected 405 with Allow ${declared.join(', ')}`, `${req.method} ${req.path} -> ${res.statusCode} allow=${allow} ${res.body.slice(0, 200)}`);
        }
        return true;
      }),
      { seed: seed + i, numRuns: runs },
    );
  }
}

/** n uses of one refresh token at once: one wins, the others are reuse, and the winner's new token dies with its family. */
export async function refreshRace(rec: Recorder, runs: number, seed: number): Promise<void> {
  const { ctx, a } = rec.world;
  const refresh = (refreshToken: string) =>
    rec.send('refresh race', {
      fault: 'none',
      method: 'POST',
      path: '/api/auth/refresh',
      query: '',
      headers: {},
      caller: 'none',
      body: { text: JSON.stringify({ refreshToken }), type: 'application/json' },
    });
  await fc.check(
    fc.asyncProperty(fc.integer({ min: 2, max: 6 }), async (n) => {
      const login = await ctx.login(a.id, a.adminEmail, PASSWORD);
      rec.count('refresh race', login.statusCode);
      const token = login.json().refreshToken as string;
      const answers = await Promise.all(Array.from({ length: n }, () => refresh(token)));
      const won = answers.filter((r) => r.statusCode === 200);
      const codes = answers.map((r) => (r.statusCode === 200 ? 200 : `${r.statusCode} ${r.json().code}`));
      const example = `${n} concurrent POST /api/auth/refresh with one token -> ${JSON.stringify(codes)}`;
      if (won.length !== 1 || answers.some((r) => r.statusCode !== 200 && r.json().code !== 'TOKEN_REUSED')) rec.note('refresh race', 'not exactly one winner, the rest TOKEN_REUSED', example);
      else if ((await refresh(won[0].json().refreshToken)).statusCode !== 401) rec.note('refresh race', "the winner's new refresh token outlived the reuse of its family", example);
      return true;
    }),
    { seed, numRuns: runs },
  );
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One raw HTTP exchange; undefined when the server just closes the connection. */
function raw(port: number, text: string): Promise<RawAnswer | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const done = () => {
      socket.destroy();
      const head = data.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(data);
      if (!m || head < 0) return resolve(undefined);
      const headers = Object.fromEntries(
        data
          .slice(0, head)
          .split('\r\n')
          .slice(1)
          .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(m[1]), headers, body: data.slice(head + 4) });
    };
    socket.setTimeout(3000, done);
    socket.on('data', (d) => {
      data += d.toString('latin1');
    });
    socket.on('close', done);
    socket.on('error', done);
    socket.write(text, 'latin1');
  });
}

/** Requests the HTTP parser refuses: each answer must still be a problem with a code fitting its status. */
export async function frameworkRefusals(rec: Recorder, runs: number, seed: number): Promise<void> {
  const { app } = rec.world.ctx;
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const line = (extra: string, path = '/api/auth/me', method = 'GET') => `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${extra}\r\n`;
  const cases = fc.oneof(
    fc.constantFrom(17_000, 40_000, 70_000).map((n) => line(`X-Big: ${'a'.repeat(n)}\r\n`)),
    fc.constantFrom(17_000, 70_000).map((n) => line('', `/api/products?${'a'.repeat(n)}`)),
    fc.integer({ min: 100, max: 3000 }).map((n) => line(Array.from({ length: n }, (_, i) => `X-H${i}: ${'v'.repeat(20)}\r\n`).join(''))),
    fc.constantFrom(
      'GARBAGE\r\n\r\n',
      'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
      'GET /\r\n\r\n',
      'GET  / HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /api/auth/me HTTP/1.1\r\n\r\n',
      line('Bad Header: x\r\n'),
      line('X-Nul: a\u0000b\r\n'),
      line('X-Cr: a\rb\r\n'),
      line('Content-Length: abc\r\n', '/api/auth/login', 'POST'),
      line('Content-Length: -1\r\n', '/api/auth/login', 'POST'),
      line('Content-Length: 5\r\nContent-Length: 6\r\n', '/api/auth/login', 'POST'),
      `${line('Transfer-Encoding: chunked\r\nContent-Length: 3\r\nContent-Type: application/json\r\n', '/api/auth/login', 'POST')}zz\r\n{}\r\n0\r\n\r\n`,
      `${line('Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n', '/api/auth/login', 'POST')}xyz\r\n{}\r\n0\r\n\r\n`,
      line('Transfer-Encoding: gzip, chunked\r\n', '/api/auth/login', 'POST'),
      `\u00ff\u00fe ${line('')}`,
      line('', '/api/\u00e9\u0001'),
      line('', '*', 'OPTIONS'),
    ),
  );
  await fc.check(
    fc.asyncProperty(cases, async (text) => {
      const res = await raw(port, text);
      rec.count('HTTP parser refusals', res?.status ?? 0);
      if (!res) return true; // the connection was dropped: nothing was answered, nothing leaked
      const breach = contractBreach({ statusCode: res.status, headers: res.headers, body: res.body }, text);
      if (breach)
        rec.note('HTTP parser refusals', breach, `${JSON.stringify(text.slice(0, 120))}... (${text.length} bytes)\n    -> ${res.status} ${res.headers['content-type']} ${res.body.slice(0, 300)}`);
      return true;
    }),
    { seed, numRuns: runs },
  );
}
