// Client jobs and presence: claim with a lease, heartbeat, complete, fail with
// backoff until dead; an expired lease returns the job; concurrent claims
// never share a job; a long poll wakes when a job is queued; presence is exact
// at 14:59/15:00 on a controlled clock and the sweep records offline,
// releasing the client's jobs; the next call is online again.
import t from 'tap';
import { clientsWorld, MINUTE } from './clients-api.ts';
import { queueJob } from '../../../plugins/ai/jobs.ts';

const w = await clientsWorld(t);
const queue = async (clientId: string, body: Record<string, unknown> = {}) => {
  const res = await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${clientId}/jobs`, { kind: 'render.report', payload: { n: 1 }, ...body });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json();
};
const claim = (token: string, query = '') => w.asClient(token, 'POST', `/api/ai/client/jobs/claim${query}`);

t.test('claim, heartbeat, complete', async (t) => {
  const c = await w.client(w.alice.token);
  t.equal((await claim(c.token)).statusCode, 204, 'nothing queued');
  const job = await queue(c.id);
  t.match(job, { state: 'queued', clientId: c.id, ownerId: w.alice.id, kind: 'render.report', payload: { n: 1 }, attempts: 0 });
  const res = await claim(c.token, '?leaseSeconds=60');
  t.equal(res.statusCode, 200);
  t.match(res.json(), { id: job.id, state: 'leased', leaseExpiresAt: new Date(w.clock.now().getTime() + 60_000).toISOString() });
  t.equal((await claim(c.token)).statusCode, 204, 'a leased job is taken');
  w.clock.advance(50_000);
  const hb = await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/heartbeat?leaseSeconds=60`);
  t.equal(hb.statusCode, 200);
  t.equal(hb.json().leaseExpiresAt, new Date(w.clock.now().getTime() + 60_000).toISOString(), 'renewed');
  const big = await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/complete`, { result: { text: 'x'.repeat(70 * 1024) } });
  t.equal(big.statusCode, 413, 'a huge result');
  t.equal((await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/complete`, { result: 1, bogus: true })).statusCode, 400, 'an unknown field');
  const done = await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/complete`, { result: { pages: 3 } });
  t.equal(done.statusCode, 200);
  t.match(done.json(), { state: 'done', result: { pages: 3 }, finishedAt: w.clock.now().toISOString(), leaseExpiresAt: null });
  t.equal((await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/complete`, { result: { again: true } })).statusCode, 409, 'done already');
  t.equal((await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/complete`, { result: 'text' })).statusCode, 400, 'a result is an object');
  const listed = await w.asClient(c.token, 'GET', '/api/ai/client/jobs?state=done');
  t.same(
    listed.json().items.map((j: any) => j.id),
    [job.id],
  );
  t.equal((await w.asClient(c.token, 'GET', '/api/ai/client/jobs?state=nonsense')).statusCode, 400);
  const owner = await w.asUser(w.alice.token, 'GET', `/api/ai/clients/${c.id}/jobs`);
  t.equal(owner.json().total, 1, 'the owner sees it');
  t.equal((await w.asUser(w.bob.token, 'GET', `/api/ai/jobs/${job.id}`)).statusCode, 404, 'another user does not');
  t.equal((await w.asUser(w.nobody.token, 'POST', `/api/ai/clients/${c.id}/jobs`, { kind: 'x' })).statusCode, 403, 'no AI code');
  for (const body of [{}, { kind: 'Bad Kind' }, { kind: 'x', extra: 1 }, { kind: 'x', maxAttempts: 0 }, { kind: 'x', payload: 'text' }]) {
    t.equal((await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/jobs`, body)).statusCode, 400, JSON.stringify(body));
  }
  const huge = await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${c.id}/jobs`, { kind: 'x', payload: { s: 'x'.repeat(70 * 1024) } });
  t.equal(huge.statusCode, 413);
});

t.test('another client cannot touch a job it does not hold', async (t) => {
  const a = await w.client(w.alice.token);
  const b = await w.client(w.alice.token);
  const job = await queue(a.id);
  t.equal((await claim(b.token)).statusCode, 204, "a job for a is not b's");
  await claim(a.token);
  for (const step of ['heartbeat', 'complete', 'fail']) {
    const res = await w.asClient(b.token, 'POST', `/api/ai/client/jobs/${job.id}/${step}`, step === 'fail' ? { error: 'x' } : step === 'complete' ? {} : undefined);
    t.equal(res.statusCode, 404, step);
  }
});

t.test('fail: retried after a backoff until maxAttempts, then dead', async (t) => {
  const c = await w.client(w.alice.token);
  const job = await queue(c.id, { maxAttempts: 2 });
  await claim(c.token);
  const first = await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/fail`, { error: 'printer offline' });
  t.match(first.json(), { state: 'failed', attempts: 1, error: 'printer offline', availableAt: new Date(w.clock.now().getTime() + 10_000).toISOString() });
  t.equal((await claim(c.token)).statusCode, 204, 'not before the backoff');
  w.clock.advance(10_000);
  t.equal((await claim(c.token)).json().id, job.id, 'after it');
  const last = await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/fail`, { error: 'again' });
  t.match(last.json(), { state: 'dead', attempts: 2, finishedAt: w.clock.now().toISOString() });
  const other = await queue(c.id);
  await claim(c.token);
  const hopeless = await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${other.id}/fail`, { error: 'bad input', retry: false });
  t.match(hopeless.json(), { state: 'dead', attempts: 1 }, 'retry: false');
  t.equal((await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${other.id}/fail`, { error: '' })).statusCode, 400);
});

t.test('an expired lease returns the job with backoff; the last one makes it dead', async (t) => {
  const c = await w.client(w.alice.token);
  const job = await queue(c.id, { maxAttempts: 2 });
  await claim(c.token, '?leaseSeconds=30');
  w.clock.advance(29_000);
  await w.sweep();
  t.equal((await w.asUser(w.alice.token, 'GET', `/api/ai/jobs/${job.id}`)).json().state, 'leased', 'not yet');
  w.clock.advance(1000);
  await w.sweep();
  const back = (await w.asUser(w.alice.token, 'GET', `/api/ai/jobs/${job.id}`)).json();
  t.match(back, { state: 'failed', attempts: 1, error: 'the lease expired', availableAt: new Date(w.clock.now().getTime() + 10_000).toISOString() });
  w.clock.advance(10_000);
  t.equal((await claim(c.token, '?leaseSeconds=30')).json().id, job.id);
  w.clock.advance(30_000);
  await w.sweep();
  t.match((await w.asUser(w.alice.token, 'GET', `/api/ai/jobs/${job.id}`)).json(), { state: 'dead', attempts: 2 });
  t.equal((await w.asClient(c.token, 'POST', `/api/ai/client/jobs/${job.id}/complete`, {})).statusCode, 409, 'too late to complete');
});

t.test('concurrent claims: two clients never get the same job', async (t) => {
  const a = await w.client(w.bob.token);
  const b = await w.client(w.bob.token);
  const owner = await w.ctx.kernel.contextFor({ tenant: w.tenant.id, principal: { kind: 'user', id: w.bob.id, roles: [], codes: ['erp:ai:view'], companyIds: [w.tenant.companyId] } });
  const ids = [];
  for (let i = 0; i < 6; i++) ids.push((await queueJob(owner, { ownerId: w.bob.id, kind: 'any.work', payload: { i } })).id);
  const results = await Promise.all(Array.from({ length: 16 }, (_, i) => claim(i % 2 ? a.token : b.token)));
  const taken = results.filter((r) => r.statusCode === 200).map((r) => r.json());
  t.equal(taken.length, 6, 'every job once');
  t.same(new Set(taken.map((j) => j.id)), new Set(ids));
  t.equal(results.filter((r) => r.statusCode === 204).length, 10, 'the others found none');
  for (const j of taken) t.ok([a.id, b.id].includes(j.clientId), 'held by the client that claimed it');
  const lost = taken[0];
  const holder = lost.clientId === a.id ? a : b;
  const other = holder === a ? b : a;
  await w.asClient(holder.token, 'POST', `/api/ai/client/jobs/${lost.id}/fail`, { error: 'busy' });
  w.clock.advance(10_000);
  const again = await claim(other.token);
  t.equal(again.json().id, lost.id, 'a job for any client is free for all of them after a failed try');
});

t.test('long poll: waits, and wakes at once when a job is queued', async (t) => {
  const c = await w.client(w.alice.token);
  const started = Date.now();
  t.equal((await claim(c.token, '?wait=1')).statusCode, 204, 'nothing within the wait');
  t.ok(Date.now() - started >= 900, 'it waited');
  const pending = claim(c.token, '?wait=20');
  await new Promise((r) => setTimeout(r, 300));
  const queuedAt = Date.now();
  const job = await queue(c.id);
  const res = await pending;
  t.equal(res.statusCode, 200);
  t.equal(res.json().id, job.id);
  t.ok(Date.now() - queuedAt < 1500, `woke in ${Date.now() - queuedAt} ms`);
  t.equal((await claim(c.token, '?wait=31')).statusCode, 400, 'beyond the cap');
});

t.test('presence: exact at 14:59 and 15:00; the sweep records offline and releases jobs; the next call is online', async (t) => {
  const c = await w.client(w.alice.token);
  const presence = async () => (await w.asUser(w.alice.token, 'GET', `/api/ai/clients/${c.id}`)).json().presence;
  const onlineEvents = (await w.events('ai.client.online')).filter((e) => e.entityId === c.id);
  t.equal(onlineEvents.length, 1, 'the first call brought it online');
  const job = await queue(c.id);
  await claim(c.token, '?leaseSeconds=3600');
  const lastCall = w.clock.now().getTime();
  w.clock.set(lastCall + 15 * MINUTE - 1000);
  t.equal(await presence(), 'online', 'at 14:59');
  await w.sweep();
  t.equal((await w.events('ai.client.offline')).filter((e) => e.entityId === c.id).length, 0, 'the sweep leaves it online');
  w.clock.set(lastCall + 15 * MINUTE);
  t.equal(await presence(), 'offline', 'at 15:00, before any sweep');
  const listed = (await w.asUser(w.alice.token, 'GET', '/api/ai/clients?size=1000')).json().items.find((x: any) => x.id === c.id);
  t.equal(listed.presence, 'offline', 'on the list too');
  await w.sweep();
  const [off] = (await w.events('ai.client.offline')).filter((e) => e.entityId === c.id);
  t.match(off?.payload, { clientId: c.id, releasedJobs: 1 });
  t.match((await w.asUser(w.alice.token, 'GET', `/api/ai/jobs/${job.id}`)).json(), { state: 'failed', error: 'the client went offline', leaseExpiresAt: null });
  await w.sweep();
  t.equal((await w.events('ai.client.offline')).filter((e) => e.entityId === c.id).length, 1, 'once');
  const tok = await w.tokenFor(c.apiKey);
  t.equal(tok.statusCode, 200);
  t.equal(await presence(), 'online');
  t.equal((await w.events('ai.client.online')).filter((e) => e.entityId === c.id).length, 2, 'online again, with an event');
});
