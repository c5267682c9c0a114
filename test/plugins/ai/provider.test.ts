// The tenant's OpenAI-compatible provider against a fake one on 127.0.0.1:
// its answer is used when it fits the schema; a refused, slow, failing or
// off-schema answer falls back to the offline parser with a warning. The key
// is write-only and encrypted; only erp:ai:admin manages providers; the
// outbound policy guards the URL.
import t from 'tap';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from '../../helper.ts';
import { assistantTenant, expectProblem, expectStatus, UNKNOWN_ID } from './assistant-fixture.ts';

interface Call {
  headers: IncomingHttpHeaders;
  url: string;
  json: any;
}

/** A fake chat-completions endpoint: `answer` decides each reply (status, body, delay). */
async function fakeProvider() {
  const calls: Call[] = [];
  const fake = {
    calls,
    url: '',
    answer: (() => ({ content: {} })) as (call: Call) => { status?: number; content?: unknown; raw?: string; delay?: number },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = { headers: req.headers, url: req.url ?? '', json: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
      calls.push(call);
      const a = fake.answer(call);
      const body = a.raw ?? JSON.stringify({ id: 'cmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(a.content) } }] });
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json' }).end(body);
      }, a.delay ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

const ctx = await build(t, { config: { outbound: { allowPrivate: true, timeoutMs: 5000, maxResponseBytes: 64 * 1024 } } });
const tenant = await ctx.tenant();
const { caller, people, projects, person } = await assistantTenant(ctx, tenant);
const fake = await fakeProvider();
t.teardown(() => fake.close());
const admin = await person('Ada Admin', ['erp:ai:admin', 'erp:pm:view']);
const NOW = '2026-03-10T09:00:00Z';
const TEXT = 'call Acme tomorrow at 3pm about the renewal, urgent, @maria #WEB';
const GOOD = { title: 'Call Acme about the renewal', dueDate: '2026-03-12', dueTime: '16:30', priority: 'critical', assignee: 'Mario', project: 'Mobile' };
const parse = (body: object = {}) => caller.api('POST', '/api/ai/assistant/parse', { text: TEXT, now: NOW, timeZone: 'Europe/Berlin', ...body });

let providerId = '';
/** a second provider on a closed port: asked only once the first is disabled */
let spareId = '';

t.test('without a provider the offline parser answers and nothing is called', async (t) => {
  const res = expectStatus(await parse(), 200, 'parse');
  t.equal(res.source, 'offline');
  t.equal(fake.calls.length, 0);
});

t.test('providers: erp:ai:admin only, the key write-only and encrypted', async (t) => {
  const body = { name: 'Local model', baseUrl: fake.url, model: 'tiny-1', apiKey: 'sk-test-0123456789', timeoutMs: 1000 };
  expectProblem(t, await caller.api('POST', '/api/ai/providers', body), 403, 'FORBIDDEN', 'erp:ai:view cannot create');
  expectProblem(t, await caller.api('GET', '/api/ai/providers'), 403, 'FORBIDDEN', 'nor list');
  const created = expectStatus(await admin.api('POST', '/api/ai/providers', body), 201, 'create');
  providerId = created.id;
  t.match(created, { kind: 'openai-compatible', name: 'Local model', enabled: true, timeoutMs: 1000, lastTestAt: null });
  t.notOk('apiKey' in created && created.apiKey, 'the key is never returned');
  t.notMatch(JSON.stringify(expectStatus(await admin.api('GET', `/api/ai/providers/${created.id}`), 200, 'read')), /sk-test/);
  // of several enabled providers the first by name is asked: this one sorts after "Local model"
  spareId = expectStatus(await admin.api('POST', '/api/ai/providers', { ...body, name: 'Spare', baseUrl: 'http://127.0.0.1:9/v1' }), 201, 'a second one').id;
  const t0 = ctx.kernel.tenants.cached(tenant.id)!;
  const raw = await ctx.kernel.dbs
    .get(t0.connectionKey)
    .em.getConnection()
    .execute(`select * from "${t0.schema}".${ctx.kernel.model('AiProvider').table}`);
  t.notMatch(JSON.stringify(raw), /sk-test-0123456789/, 'stored encrypted');
  for (const [bad, what] of [
    [{ ...body, baseUrl: 'ftp://example.com' }, 'not http'],
    [{ ...body, timeoutMs: 10 }, 'timeout too short'],
    [{ ...body, model: '' }, 'no model'],
    [{ ...body, bogus: 1 }, 'unknown field'],
  ] as const)
    expectProblem(t, await admin.api('POST', '/api/ai/providers', bad), 400, 'VALIDATION_FAILED', what);
});

t.test("parse asks the provider and uses its valid answer, matched among the caller's users and projects", async (t) => {
  fake.answer = () => ({ content: GOOD });
  const res = expectStatus(await parse(), 200, 'parse');
  t.equal(res.source, 'provider');
  t.match(res.proposal, {
    title: GOOD.title,
    dueDate: '2026-03-12',
    dueTime: '16:30',
    dueAt: '2026-03-12T15:30:00.000Z',
    priority: 'critical',
    assigneeId: people['Mario Bianchi'].id,
    projectId: projects.MOB.id,
  });
  t.same(res.warnings, []);
  const call = fake.calls.at(-1)!;
  t.equal(call.url, '/v1/chat/completions');
  t.equal(call.headers.authorization, 'Bearer sk-test-0123456789', 'the key, decrypted, only on the wire');
  t.match(call.json, { model: 'tiny-1', temperature: 0, response_format: { type: 'json_schema', json_schema: { strict: true, name: 'task_proposal' } } });
  t.match(JSON.parse(call.json.messages[1].content), { text: TEXT, timeZone: 'Europe/Berlin', reference: '2026-03-10T10:00' });
  const calls = fake.calls.length;
  t.equal(expectStatus(await parse({ useProvider: false }), 200, 'offline asked').source, 'offline');
  t.equal(fake.calls.length, calls, 'useProvider: false calls nothing');
});

t.test('any failure falls back to the offline parser with a warning', async (t) => {
  const failures: [string, () => ReturnType<typeof fake.answer>][] = [
    ['HTTP 500', () => ({ status: 500, raw: '{"error":"boom"}' })],
    ['HTTP 401', () => ({ status: 401, raw: '{"error":"bad key"}' })],
    ['not JSON', () => ({ raw: 'hello' })],
    ['no choices', () => ({ raw: '{"choices":[]}' })],
    ['content not JSON', () => ({ raw: JSON.stringify({ choices: [{ message: { content: 'Sure! Here it is' } }] }) })],
    ['unknown priority', () => ({ content: { ...GOOD, priority: 'urgent' } })],
    ['extra field', () => ({ content: { ...GOOD, confidence: 0.9 } })],
    ['missing field', () => ({ content: { title: 'x' } })],
    ['no such day', () => ({ content: { ...GOOD, dueDate: '2026-02-30' } })],
    ['bad time', () => ({ content: { ...GOOD, dueTime: '3pm' } })],
    ['too slow', () => ({ content: GOOD, delay: 1500 })],
    ['too big', () => ({ content: { ...GOOD, title: 'x'.repeat(500) }, raw: JSON.stringify({ choices: [{ message: { content: 'x'.repeat(70 * 1024) } }] }) })],
  ];
  for (const [what, answer] of failures) {
    fake.answer = answer;
    const res = expectStatus(await parse(), 200, what);
    t.equal(res.source, 'offline', `${what}: offline`);
    t.same(
      res.warnings.map((w: { code: string }) => w.code),
      ['PROVIDER_FAILED'],
      `${what}: warned`,
    );
    t.match(res.proposal, { title: 'Call Acme about the renewal', dueDate: '2026-03-11', dueTime: '15:00', priority: 'high', projectId: projects.WEB.id }, `${what}: the offline fields`);
  }
  await new Promise((resolve) => setTimeout(resolve, 600)); // the slow answer's server timer
});

t.test('an unreachable or disabled provider', async (t) => {
  expectStatus(await admin.api('PATCH', `/api/ai/providers/${providerId}`, { baseUrl: 'http://127.0.0.1:9/v1' }), 200, 'a closed port');
  const res = expectStatus(await parse(), 200, 'parse');
  t.equal(res.source, 'offline');
  t.equal(res.warnings[0].code, 'PROVIDER_FAILED');
  expectStatus(await admin.api('PATCH', `/api/ai/providers/${providerId}`, { baseUrl: fake.url, enabled: false }), 200, 'disabled');
  const calls = fake.calls.length;
  t.same(
    expectStatus(await parse(), 200, 'parse').warnings.map((w: { code: string }) => w.code),
    ['PROVIDER_FAILED'],
    'the next enabled one (on a closed port) is asked',
  );
  expectStatus(await admin.api('PATCH', `/api/ai/providers/${spareId}`, { enabled: false }), 200, 'spare disabled');
  t.same(expectStatus(await parse(), 200, 'parse').warnings, [], 'none enabled: no warning');
  t.equal(fake.calls.length, calls, 'disabled: not called');
  expectStatus(await admin.api('PATCH', `/api/ai/providers/${providerId}`, { enabled: true }), 200, 'enabled');
});

t.test('POST /providers/:id/test records the outcome', async (t) => {
  fake.answer = () => ({ content: GOOD });
  const ok = expectStatus(await admin.api('POST', `/api/ai/providers/${providerId}/test`), 200, 'test');
  t.match(ok, { ok: true, error: null, answer: GOOD });
  t.match(expectStatus(await admin.api('GET', `/api/ai/providers/${providerId}`), 200, 'read'), { lastTestOk: true, lastTestFailure: null, lastTestAt: String });
  fake.answer = () => ({ status: 503, raw: '{}' });
  const failed = expectStatus(await admin.api('POST', `/api/ai/providers/${providerId}/test`), 200, 'failing');
  t.match(failed, { ok: false, error: /503/, answer: null });
  t.match(expectStatus(await admin.api('GET', `/api/ai/providers/${providerId}`), 200, 'read'), { lastTestOk: false, lastTestFailure: /503/ });
  expectProblem(t, await caller.api('POST', `/api/ai/providers/${providerId}/test`), 403, 'FORBIDDEN', 'erp:ai:view');
  expectProblem(t, await admin.api('POST', `/api/ai/providers/${UNKNOWN_ID}/test`), 404, 'NOT_FOUND', 'unknown');
  expectProblem(t, await admin.api('POST', '/api/ai/providers/nope/test'), 400, 'VALIDATION_FAILED', 'malformed id');
});

t.test("another tenant's provider is not this tenant's", async (t) => {
  const other = await ctx.tenant();
  const otherAdmin = await ctx.user(other, { codes: ['erp:ai:admin', 'erp:ai:view'] });
  const res = await ctx.as(otherAdmin.token, { method: 'GET', url: `/api/ai/providers/${providerId}` });
  expectProblem(t, res, 404, 'NOT_FOUND', 'foreign provider');
  const calls = fake.calls.length;
  const parsed = await ctx.as(otherAdmin.token, { method: 'POST', url: '/api/ai/assistant/parse', payload: { text: 'call Acme tomorrow' } });
  t.equal(expectStatus(parsed, 200, 'parse').source, 'offline');
  t.equal(fake.calls.length, calls, 'never calls another tenant\u2019s provider');
});

t.test('the default outbound policy refuses loopback and private provider URLs', async (t) => {
  const strict = await build(t);
  const st = await strict.tenant();
  const api = (payload: object) => strict.as(st.adminToken, { method: 'POST', url: '/api/ai/providers', payload });
  for (const baseUrl of ['http://127.0.0.1:8080/v1', 'http://localhost/v1', 'http://10.0.0.8/v1', 'http://169.254.169.254/latest']) {
    const res = await api({ name: 'x', baseUrl, model: 'm' });
    expectProblem(t, res, 400, 'VALIDATION_FAILED', baseUrl);
    t.equal(res.json().errors[0].path, '/baseUrl');
  }
});
