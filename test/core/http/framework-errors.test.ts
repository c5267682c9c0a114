// Refusals made before any route runs, over a real socket (app.inject does not
// go through Node's HTTP parser): every one is an RFC 9457 problem; the ones
// that leave the connection unusable say Connection: close and close it, the
// others leave it serving the next request.
import t, { type Test } from 'tap';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { openKernel } from '../../../core/kernel.ts';
import { buildApp } from '../../../core/app.ts';
import { CLOSING_RETRY_AFTER_SECONDS } from '../../../core/http/framework-errors.ts';
import { onPglite, preparePgliteSnapshot, testConfig } from '../../helper.ts';

const BODY_LIMIT = 4096;

if (onPglite) await preparePgliteSnapshot();
const kernel = await openKernel(testConfig({ bodyLimit: BODY_LIMIT }));
const app = await buildApp(kernel, { logger: false });
// lets a test hold the app half-closed: closing, but its connections still open
let holdClose: { reached: () => void; released: Promise<void> } | undefined;
app.addHook('preClose', async () => {
  if (holdClose) {
    holdClose.reached();
    await holdClose.released;
  }
});
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address() as AddressInfo;
let closed = false;
t.teardown(async () => {
  if (!closed) await app.close();
  await kernel.close();
});

interface Response {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: () => any;
}

/** One client connection that reads responses as they come. */
class Connection {
  socket = net.connect(port, '127.0.0.1');
  #buf = Buffer.alloc(0);
  #closed = false;
  #wake: (() => void)[] = [];
  constructor() {
    this.socket.on('data', (d) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      this.#notify();
    });
    this.socket.on('close', () => {
      this.#closed = true;
      this.#notify();
    });
    this.socket.on('error', () => {});
  }
  #notify() {
    for (const w of this.#wake.splice(0)) w();
  }
  async #until<T>(f: () => T | undefined): Promise<T> {
    const deadline = setTimeout(() => this.socket.destroy(), 5000);
    try {
      for (;;) {
        const v = f();
        if (v !== undefined) return v;
        if (this.#closed) throw new Error('connection closed');
        await new Promise<void>((r) => this.#wake.push(r));
      }
    } finally {
      clearTimeout(deadline);
    }
  }
  send(data: string | Buffer) {
    this.socket.write(data);
    return this;
  }
  /** The next whole response (every answer here carries Content-Length). */
  response(): Promise<Response> {
    return this.#until(() => {
      const end = this.#buf.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [line, ...fields] = this.#buf.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length']);
      if (!Number.isInteger(length)) throw new Error(`no Content-Length: ${line}`);
      if (this.#buf.length < end + 4 + length) return undefined;
      const body = this.#buf.subarray(end + 4, end + 4 + length).toString('utf8');
      this.#buf = this.#buf.subarray(end + 4 + length);
      return { status: Number(line.split(' ')[1]), headers, body, json: () => JSON.parse(body) };
    });
  }
  /** Resolves once the server has closed the connection. */
  closed(): Promise<true> {
    return this.#until(() => (this.#closed ? true : undefined)).catch(() => true as const);
  }
  end() {
    this.socket.destroy();
  }
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: test\r\n${extra}\r\n`;
const post = (path: string, body: string, type = 'application/json') =>
  `POST /${path.replace(/^\//, '')} HTTP/1.1\r\nHost: test\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

function expectProblem(t: Test, res: Response, status: number, code: string, what: string) {
  t.equal(res.status, status, `${what}: status ${status}`);
  t.match(res.headers['content-type'], /^application\/problem\+json/, `${what}: problem+json`);
  t.match(res.json(), { status, code, type: /^https:/, title: String, requestId: String }, `${what}: a problem with code ${code}`);
}

/** The refusal closes the connection and says so. */
async function expectClosingRefusal(t: Test, request: string | Buffer, status: number, code: string, what: string) {
  const c = new Connection().send(request);
  const res = await c.response();
  expectProblem(t, res, status, code, what);
  t.equal(res.headers.connection?.toLowerCase(), 'close', `${what}: Connection: close`);
  t.ok(await c.closed(), `${what}: the server closed the connection`);
}

t.test("what Node's parser refuses is a problem, and the connection is closed", async (t) => {
  await expectClosingRefusal(t, get('/health/live', `X-Big: ${'a'.repeat(20_000)}\r\n`), 431, 'HEADERS_TOO_LARGE', 'oversized headers');
  await expectClosingRefusal(t, get('/health/live', 'X-Odd: a\x01b\r\n'), 400, 'VALIDATION_FAILED', 'a control character in a header');
  // a NUL in a header value never reaches a route: the input guard needs not check headers
  await expectClosingRefusal(t, get('/health/live', 'X-Nul: a\x00b\r\n'), 400, 'VALIDATION_FAILED', 'NUL in a header');
  await expectClosingRefusal(t, 'GARBAGE\r\n\r\n', 400, 'VALIDATION_FAILED', 'a bad request line');
  await expectClosingRefusal(t, 'GET /health/live HTTP/9.9\r\nHost: test\r\n\r\n', 400, 'VALIDATION_FAILED', 'an unknown HTTP version');
  await expectClosingRefusal(
    t,
    'POST /api/auth/login HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    400,
    'VALIDATION_FAILED',
    'Content-Length beside Transfer-Encoding',
  );
  await expectClosingRefusal(t, 'GET /health/live HTTP/1.1\r\n\r\n', 400, 'VALIDATION_FAILED', 'HTTP/1.1 without Host');

  const old = new Connection().send('GET /health/live HTTP/1.0\r\n\r\n');
  t.equal((await old.response()).status, 200, 'HTTP/1.0 needs no Host');
  old.end();
});

t.test('a request that does not arrive in time is 408, then closed', async (t) => {
  const accepted = new Promise<net.Socket>((resolve) => app.server.once('connection', resolve));
  const c = new Connection().send('GET /health/live HTTP/1.1\r\n');
  // Node's own timer ticks every 30 s at the soonest: raise what it would raise
  app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), await accepted);
  const res = await c.response();
  expectProblem(t, res, 408, 'REQUEST_TIMEOUT', 'timeout');
  t.equal(res.headers.connection, 'close');
  t.ok(await c.closed());
});

t.test('refusals that leave the connection clean keep it serving', async (t) => {
  const c = new Connection();
  const next = async (what: string) => {
    const res = await c.send(get('/health/live')).response();
    t.equal(res.status, 200, `${what}: the next request on the connection is answered`);
    t.not(res.headers.connection?.toLowerCase(), 'close', `${what}: still keep-alive`);
  };
  expectProblem(t, await c.send(get('/nowhere')).response(), 404, 'NOT_FOUND', '404');
  await next('404');
  expectProblem(t, await c.send(post('/api/auth/login', '{x}')).response(), 400, 'VALIDATION_FAILED', 'bad JSON');
  await next('bad JSON');
  expectProblem(t, await c.send(post('/api/auth/login', '{}', 'text/plain')).response(), 415, 'UNSUPPORTED_MEDIA_TYPE', '415');
  await next('415');
  expectProblem(t, await c.send(get('/api/%zz')).response(), 400, 'VALIDATION_FAILED', 'a bad URL');
  await next('bad URL');
  expectProblem(t, await c.send(get('/health/live?x=%00')).response(), 400, 'VALIDATION_FAILED', 'NUL in the query');
  await next('NUL in the query');
  expectProblem(t, await c.send(post('/api/auth/login', '{"email":"a\\u0000"}')).response(), 400, 'VALIDATION_FAILED', 'NUL in the body');
  await next('NUL in the body');
  expectProblem(t, await c.send(get('/health/live', 'Expect: something\r\n')).response(), 417, 'EXPECTATION_FAILED', 'an unknown Expect');
  await next('417');
  // pipelined: both answers come, in order
  const [a, b] = [c.send(get('/nowhere') + get('/health/live')).response(), c.response()];
  t.equal((await a).status, 404);
  t.equal((await b).status, 200);
  c.end();
});

t.test('a body over the limit is 413; with its rest unread the connection is closed', async (t) => {
  const body = JSON.stringify({ name: 'x'.repeat(BODY_LIMIT) });
  await expectClosingRefusal(t, post('/api/auth/login', body), 413, 'PAYLOAD_TOO_LARGE', 'a body over the limit, sent');
  await expectClosingRefusal(
    t,
    `POST /api/auth/login HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${BODY_LIMIT * 100}\r\n\r\n{`,
    413,
    'PAYLOAD_TOO_LARGE',
    'a body over the limit, announced',
  );
  await expectClosingRefusal(
    t,
    `POST /api/auth/login HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${(BODY_LIMIT + 10).toString(16)}\r\n${'x'.repeat(BODY_LIMIT + 10)}\r\n`,
    413,
    'PAYLOAD_TOO_LARGE',
    'a chunked body over the limit',
  );
});

t.test('while the server closes, a request on an open connection is 503 with Retry-After, and the connection closes', async (t) => {
  const c = new Connection();
  t.equal((await c.send(get('/health/live')).response()).status, 200, 'connection open');
  let release!: () => void;
  const reached = new Promise<void>((resolve) => {
    holdClose = {
      reached: resolve,
      released: new Promise((r) => {
        release = r;
      }),
    };
  });
  const closing = app.close();
  closed = true;
  await reached;
  const res = await c.send(get('/health/live')).response();
  expectProblem(t, res, 503, 'SERVICE_UNAVAILABLE', 'closing');
  t.equal(res.headers['retry-after'], String(CLOSING_RETRY_AFTER_SECONDS));
  t.equal(res.headers.connection?.toLowerCase(), 'close');
  t.ok(await c.closed(), 'connection closed');
  release();
  await closing;
});
