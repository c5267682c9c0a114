// API-key clients: the key is shown once and only its hash is stored (no
// answer holds it), revoked and expired keys are refused, rotation keeps the
// old key for its grace period, client tokens work on /api/ai/client/* only
// and user tokens are refused there; owners see their clients, admins all.
import t from 'tap';
import { clientsWorld, MINUTE } from './clients-api.ts';

const w = await clientsWorld(t);
const DAY = 24 * 60 * MINUTE;
/** every stored secret of the tenant's clients, for "never in an answer" checks */
// (lookup ids too, but for an answer that shows a new key: the key holds its own lookup id)
const storedSecrets = async (lookups = true) => {
  const rows = (await w.ctx.kernel.dbs.main.em
    .getConnection()
    .execute(`select key_hash, token_key, previous_key_hash${lookups ? ', key_lookup, previous_key_lookup' : ''} from "${w.tenant.schema}".ai_clients`)) as Record<string, string | null>[];
  return rows.flatMap((r) => Object.values(r)).filter((v): v is string => typeof v === 'string');
};
const leaks = async (body: string, lookups = true) => (await storedSecrets(lookups)).filter((s) => body.includes(s));
const KEY = /^plk_[a-z][a-z0-9-]+_[0-9a-f]{16}_[0-9a-f]{64}$/;

t.test('create: the key once, in a recognisable format; only its last four are shown after', async (t) => {
  const res = await w.asUser(w.alice.token, 'POST', '/api/ai/clients', { name: 'Laptop', description: 'office', scopes: ['erp:pm:view'] });
  t.equal(res.statusCode, 201, res.body);
  const { apiKey, ...client } = res.json();
  t.match(apiKey, KEY);
  t.ok(apiKey.startsWith(`plk_${w.tenant.id}_`), 'names its tenant');
  t.equal(res.headers.location, `/api/ai/clients/${client.id}`);
  t.match(client, { name: 'Laptop', ownerId: w.alice.id, status: 'active', keyLastFour: apiKey.slice(-4), presence: 'offline', lastSeenAt: null, scopes: ['erp:ai:client', 'erp:pm:view'] });
  for (const field of ['keyHash', 'keyLookup', 'tokenKey', 'previousKeyHash', 'apiKey']) t.notOk(field in client, `no ${field} in the client`);
  t.same(await leaks(res.body, false), [], 'no stored secret in the answer');
  const secret = apiKey.split('_')[3];
  const read = await w.asUser(w.alice.token, 'GET', `/api/ai/clients/${client.id}`);
  const list = await w.asUser(w.alice.token, 'GET', '/api/ai/clients');
  for (const r of [read, list]) {
    t.equal(r.statusCode, 200);
    t.notOk(r.body.includes(secret), 'the key is never shown again');
    t.notOk(r.body.includes('plk_'));
    t.same(await leaks(r.body), []);
  }
  const stored = await storedSecrets();
  t.notOk(stored.includes(secret), 'the secret itself is not stored');
});

t.test('scopes: known codes the creator holds; erp:ai:client always', async (t) => {
  const escalate = await w.asUser(w.bob.token, 'POST', '/api/ai/clients', { name: 'x', scopes: ['erp:ai:admin'] });
  t.equal(escalate.statusCode, 403, 'no code beyond the creator');
  t.equal(escalate.json().code, 'FORBIDDEN');
  const unknown = await w.asUser(w.bob.token, 'POST', '/api/ai/clients', { name: 'x', scopes: ['no:such:code'] });
  t.equal(unknown.statusCode, 400);
  t.equal(unknown.json().code, 'VALIDATION_FAILED');
  const admin = await w.admin('POST', '/api/ai/clients', { name: 'ops', scopes: ['erp:ai:admin'] });
  t.equal(admin.statusCode, 201, 'an admin holds it');
  t.same(admin.json().scopes, ['erp:ai:admin', 'erp:ai:client']);
});

t.test('bad input: unknown, missing, mistyped, huge fields', async (t) => {
  const cases: [string, unknown][] = [
    ['unknown field', { name: 'x', keyHash: 'abc' }],
    ['missing name', { description: 'x' }],
    ['mistyped name', { name: 5 }],
    ['huge name', { name: 'x'.repeat(121) }],
    ['huge description', { name: 'x', description: 'x'.repeat(2001) }],
    ['too many scopes', { name: 'x', scopes: Array.from({ length: 51 }, (_, i) => `a:b:${i}`) }],
    ['expiry not in the future', { name: 'x', expiresInDays: 0 }],
    ['expiry too far', { name: 'x', expiresInDays: 3651 }],
    ['expiry not a number', { name: 'x', expiresInDays: 'tomorrow' }],
    ['an absolute expiry', { name: 'x', expiresAt: '2040-01-01T00:00:00Z' }],
    ['read-only owner', { name: 'x', ownerId: w.bob.id }],
  ];
  for (const [what, body] of cases) {
    const res = await w.asUser(w.alice.token, 'POST', '/api/ai/clients', body);
    t.equal(res.statusCode, 400, what);
    t.equal(res.json().code, 'VALIDATION_FAILED', what);
  }
  const c = await w.client(w.alice.token);
  t.equal((await w.asUser(w.alice.token, 'PATCH', `/api/ai/clients/${c.id}`, {})).statusCode, 400, 'an empty patch');
  t.equal((await w.asUser(w.alice.token, 'PATCH', `/api/ai/clients/${c.id}`, { status: 'revoked' })).statusCode, 400, 'status only through revoke');
  t.equal((await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/rotate?graceSeconds=${10 ** 9}`)).statusCode, 400, 'a grace beyond the maximum');
  t.equal((await w.asUser(w.alice.token, 'GET', '/api/ai/clients/not-a-uuid')).statusCode, 400);
  t.equal((await w.asUser(w.alice.token, 'GET', '/api/ai/clients?bogus=1')).statusCode, 400);
  t.equal((await w.asUser(w.alice.token, 'GET', '/api/ai/clients/01a2099a-722a-75e6-a313-51445535e497')).statusCode, 404);
});

t.test('owners see their own clients, admins every one; no AI code: 403', async (t) => {
  const mine = await w.client(w.bob.token, { name: 'Bob desk' });
  t.equal((await w.asUser(w.alice.token, 'GET', `/api/ai/clients/${mine.id}`)).statusCode, 404, "another user's client is unknown");
  t.equal((await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${mine.id}/revoke`)).statusCode, 404);
  t.equal((await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${mine.id}/jobs`, { kind: 'x' })).statusCode, 404);
  const bobs = (await w.asUser(w.bob.token, 'GET', '/api/ai/clients')).json().items;
  t.ok(bobs.every((c: any) => c.ownerId === w.bob.id) && bobs.some((c: any) => c.id === mine.id));
  const all = (await w.admin('GET', '/api/ai/clients?size=1000')).json().items;
  t.ok(all.some((c: any) => c.ownerId === w.alice.id) && all.some((c: any) => c.ownerId === w.bob.id), 'the admin sees all');
  const patched = await w.asUser(w.bob.token, 'PATCH', `/api/ai/clients/${mine.id}`, { name: 'Renamed' });
  t.equal(patched.statusCode, 200);
  t.equal(patched.json().name, 'Renamed');
  const stale = await w.ctx.as(w.bob.token, { method: 'PATCH', url: `/api/ai/clients/${mine.id}`, payload: { name: 'Again' }, headers: { 'if-match': '"1"' } });
  t.equal(stale.statusCode, 412, 'a stale If-Match');
  for (const [method, url] of [
    ['GET', '/api/ai/clients'],
    ['POST', '/api/ai/clients'],
  ]) {
    const res = await w.asUser(w.nobody.token, method, url, method === 'POST' ? { name: 'x' } : undefined);
    t.equal(res.statusCode, 403, `${method} ${url} without erp:ai:view`);
  }
  const other = await w.ctx.tenant();
  t.equal((await w.asUser(other.adminToken, 'GET', `/api/ai/clients/${mine.id}`)).statusCode, 404, "another tenant's admin");
  t.notOk((await w.asUser(other.adminToken, 'GET', '/api/ai/clients')).json().items.some((c: any) => c.id === mine.id));
  t.equal((await w.asUser(w.alice.token, 'PUT', `/api/ai/clients/${mine.id}`, { name: 'x' })).statusCode, 405);
});

t.test('client tokens only on /api/ai/client/*, user tokens refused there', async (t) => {
  const c = await w.client(w.alice.token);
  t.equal((await w.asClient(c.token, 'GET', '/api/ai/client/jobs')).statusCode, 200);
  for (const url of ['/api/ai/clients', '/api/ai/jobs', '/api/pm/tasks', '/api/auth/me']) t.equal((await w.asClient(c.token, 'GET', url)).statusCode, 401, `client token on ${url}`);
  const user = await w.asUser(w.alice.token, 'GET', '/api/ai/client/jobs');
  t.equal(user.statusCode, 401, 'a user token on a client route');
  t.equal(user.json().code, 'UNAUTHENTICATED');
  t.equal((await w.asUser(w.alice.token, 'POST', '/api/ai/client/token')).statusCode, 401, 'a user token for a client token');
  const withKey = await w.ctx.app.inject({ method: 'GET', url: '/api/ai/client/jobs', headers: { 'x-api-key': c.apiKey } });
  t.equal(withKey.statusCode, 401, 'the key itself is only for the token route');
  t.equal((await w.ctx.app.inject({ method: 'GET', url: '/api/ai/clients', headers: { 'x-api-key': c.apiKey } })).statusCode, 401);
  const forged = c.token.slice(0, -2) + (c.token.endsWith('AA') ? 'BB' : 'AA');
  t.equal((await w.asClient(forged, 'GET', '/api/ai/client/jobs')).statusCode, 401, 'a forged signature');
  t.equal((await w.asClient('plct_garbage.x', 'GET', '/api/ai/client/jobs')).statusCode, 401);
  for (const key of ['nonsense', `plk_nosuchtenant_${'0'.repeat(16)}_${'0'.repeat(64)}`, c.apiKey.slice(0, -1) + (c.apiKey.endsWith('0') ? '1' : '0')]) {
    const res = await w.tokenFor(key);
    t.equal(res.statusCode, 401, `key ${key.slice(0, 20)}…`);
    t.equal(res.json().code, 'UNAUTHENTICATED');
  }
  // a token of one tenant names its tenant: the same client id elsewhere is unknown
  const tok = await w.tokenFor(c.apiKey);
  t.same(await leaks(tok.body), [], 'the token answer holds no stored secret');
  t.match(tok.json(), { tokenType: 'Bearer', expiresIn: 900, clientId: c.id });
  w.clock.advance(15 * MINUTE);
  t.equal((await w.asClient(c.token, 'GET', '/api/ai/client/jobs')).statusCode, 401, 'a token after its 15 minutes');
  t.equal((await w.asClient(tok.json().token, 'GET', '/api/ai/client/jobs')).statusCode, 401);
  t.equal((await w.tokenFor(c.apiKey)).statusCode, 200, 'the key gets a new one');
});

t.test('revoke: keys and tokens refused at once', async (t) => {
  const c = await w.client(w.alice.token);
  const res = await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/revoke`);
  t.equal(res.statusCode, 200);
  t.match(res.json(), { status: 'revoked', presence: 'offline' });
  t.same(await leaks(res.body), []);
  t.equal((await w.asClient(c.token, 'GET', '/api/ai/client/jobs')).statusCode, 401, 'its live token');
  t.equal((await w.tokenFor(c.apiKey)).statusCode, 401, 'its key');
  t.equal((await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/rotate`)).statusCode, 409, 'no new key for a revoked client');
  t.equal((await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/jobs`, { kind: 'x' })).statusCode, 409, 'no jobs for it');
  t.equal((await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/revoke`)).statusCode, 200, 'revoking again changes nothing');
});

t.test('expiry: the key and its tokens are refused from expiresAt on', async (t) => {
  const c = await w.client(w.alice.token, { expiresInDays: 1 });
  t.equal(c.body.expiresAt, new Date(w.clock.now().getTime() + DAY).toISOString());
  // its tokens never outlive it
  w.clock.advance(DAY - 5 * MINUTE);
  const last = await w.tokenFor(c.apiKey);
  t.equal(last.json().expiresIn, 5 * 60, 'a token up to the expiry');
  w.clock.advance(5 * MINUTE - 1);
  t.equal((await w.tokenFor(c.apiKey)).statusCode, 200, 'a moment before');
  w.clock.advance(1);
  const res = await w.tokenFor(c.apiKey);
  t.equal(res.statusCode, 401, 'at expiresAt');
  t.equal(res.json().code, 'UNAUTHENTICATED');
  t.equal((await w.asClient(last.json().token, 'GET', '/api/ai/client/jobs')).statusCode, 401, 'and its token');
});

t.test('rotation: the old key works during the grace, not after; the new one at once', async (t) => {
  const c = await w.client(w.alice.token);
  const res = await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/rotate?graceSeconds=600`);
  t.equal(res.statusCode, 200, res.body);
  const { apiKey, ...client } = res.json();
  t.match(apiKey, KEY);
  t.not(apiKey, c.apiKey);
  t.match(client, { keyLastFour: apiKey.slice(-4), previousKeyLastFour: c.apiKey.slice(-4), previousKeyExpiresAt: new Date(w.clock.now().getTime() + 600_000).toISOString() });
  t.same(await leaks(res.body.replace(apiKey, '')), [], 'nothing stored but in the new key');
  t.equal((await w.tokenFor(apiKey)).statusCode, 200, 'the new key');
  w.clock.advance(600_000 - 1);
  t.equal((await w.tokenFor(c.apiKey)).statusCode, 200, 'the old key within the grace');
  w.clock.advance(1);
  t.equal((await w.tokenFor(c.apiKey)).statusCode, 401, 'the old key after it');
  t.equal((await w.tokenFor(apiKey)).statusCode, 200);
  // no grace: the old key ends at once; the default grace is an hour
  const now = await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/rotate?graceSeconds=0`);
  t.equal((await w.tokenFor(apiKey)).statusCode, 401, 'graceSeconds 0');
  const dflt = await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/rotate`);
  t.equal(dflt.json().previousKeyExpiresAt, new Date(w.clock.now().getTime() + 3600_000).toISOString());
  t.equal((await w.tokenFor(now.json().apiKey)).statusCode, 200);
  // revoke ends both keys at once
  await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/revoke`);
  t.equal((await w.tokenFor(now.json().apiKey)).statusCode, 401);
  t.equal((await w.tokenFor(dflt.json().apiKey)).statusCode, 401);
});
