// A server left idle, for test/core/events/idle.test.ts, in a process of its own so
// that its CPU is only its own: a kernel and app on the test database (TEST_DB)
// with a registry of its own, its dispatcher, job workers and cron running, and
// one tenant (the per-minute cron jobs fan out to it). Over IPC it answers
// "ready" once started, its process.cpuUsage() when asked "cpu", and closes on "stop".
import { randomBytes } from 'node:crypto';
import { build } from '../helper.ts';

const teardowns: (() => unknown)[] = [];
const ctx = await build({ teardown: (fn) => teardowns.push(fn) }, { config: { registrySchema: `idle_test_${randomBytes(4).toString('hex')}`, workers: true } });
await ctx.kernel.startWorkers({ error: (o: unknown, m?: string) => console.error(m, o), warn: () => {} });
const tenant = await ctx.tenant();
const res = await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/products' });
if (res.statusCode !== 200) throw new Error(`GET /api/products answered ${res.statusCode}: ${res.body}`);

process.on('message', (msg) => {
  if (msg === 'cpu') process.send!({ cpu: process.cpuUsage() });
  if (msg === 'stop')
    void (async () => {
      for (const fn of teardowns.reverse()) await fn();
      process.disconnect();
    })();
});
process.send!('ready');
