// The "done when": a desktop client over a real socket (the app
// listening on a port, fetch) registers (its user creates it), gets a token,
// takes a job, heartbeats, completes it, falls silent and is offline 15
// minutes later by the controlled clock.
import t from 'tap';
import { clientsWorld, MINUTE } from './clients-api.ts';

const w = await clientsWorld(t);
await w.ctx.app.listen({ port: 0, host: '127.0.0.1' });
const address = w.ctx.app.server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const user = { authorization: `Bearer ${w.alice.token}` };

t.test('register, token, job, heartbeat, complete, silence, offline', async (t) => {
  const created = await call('POST', '/api/ai/clients', user, { name: 'Alice desktop' });
  t.equal(created.status, 201);
  const { apiKey, ...client } = created.body;

  const token = await call('POST', '/api/ai/client/token', { 'x-api-key': apiKey });
  t.equal(token.status, 200);
  const bearer = { authorization: `Bearer ${token.body.token}` };

  // the client waits for work; its user queues a job meanwhile
  const waiting = call('POST', '/api/ai/client/jobs/claim?wait=10', bearer);
  await new Promise((r) => setTimeout(r, 200));
  const queued = await call('POST', `/api/ai/clients/${client.id}/jobs`, user, { kind: 'summarise.inbox', payload: { folder: 'INBOX' } });
  t.equal(queued.status, 201);
  const job = await waiting;
  t.equal(job.status, 200);
  t.match(job.body, { id: queued.body.id, state: 'leased', payload: { folder: 'INBOX' } });

  w.clock.advance(60_000);
  const beat = await call('POST', `/api/ai/client/jobs/${job.body.id}/heartbeat`, bearer);
  t.equal(beat.status, 200);
  t.equal(beat.body.leaseExpiresAt, new Date(w.clock.now().getTime() + 120_000).toISOString());

  const done = await call('POST', `/api/ai/client/jobs/${job.body.id}/complete`, bearer, { result: { summary: '3 new mails' } });
  t.equal(done.status, 200);
  t.match(done.body, { state: 'done', result: { summary: '3 new mails' } });
  const mine = await call('GET', '/api/ai/client/jobs?state=done', bearer);
  t.same(
    mine.body.items.map((j: any) => j.id),
    [job.body.id],
  );

  const seen = (await call('GET', `/api/ai/clients/${client.id}`, user)).body;
  t.equal(seen.presence, 'online');
  const last = new Date(seen.lastSeenAt).getTime();
  t.ok(last >= w.clock.now().getTime() - 5000, 'its last call');

  // silence
  w.clock.set(last + 15 * MINUTE - 1);
  t.equal((await call('GET', `/api/ai/clients/${client.id}`, user)).body.presence, 'online', 'just under 15 minutes');
  w.clock.set(last + 15 * MINUTE);
  t.equal((await call('GET', `/api/ai/clients/${client.id}`, user)).body.presence, 'offline', '15 minutes later');
  await w.sweep();
  t.ok(
    (await w.events('ai.client.offline')).some((e) => e.entityId === client.id),
    'the sweep recorded it',
  );
});
