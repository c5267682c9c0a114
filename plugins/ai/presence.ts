// Presence (seed §3): a client is online while its last authenticated call is
// less than 15 minutes ago, computed whenever it is read, so it is exact at
// any instant (14:59 online, 15:00 offline). The stored `presence` records the
// moves: a call of an offline client brings it online (ai.client.online), and
// a sweep every minute records those that fell silent (ai.client.offline)
// and returns their leased jobs to the queue.
import type { JobDefinition, ModuleContext, Row } from '../../core/plugin-api.ts';
import { releaseJobsOf, expireLeases } from './jobs.ts';

export const OFFLINE_AFTER_MS = 15 * 60_000;
/** a busy client's calls write its lastSeenAt at most this often */
const TOUCH_EVERY_MS = 5_000;
const SWEEP_BATCH = 200;

function isOnline(lastSeenAt: unknown, now: Date): boolean {
  if (typeof lastSeenAt !== 'string') return false;
  return now.getTime() - new Date(lastSeenAt).getTime() < OFFLINE_AFTER_MS;
}

/** A client's row with its presence as of `now` (a revoked client is offline, whatever it last did). */
export function withPresence<T extends Record<string, unknown>>(row: T, now: Date): T {
  return { ...row, presence: row.status === 'active' && isOnline(row.lastSeenAt, now) ? 'online' : 'offline' };
}

/**
 * A call of the client (`sys`: a system context of its tenant): counts as
 * activity. Cheap for a busy client (no write within TOUCH_EVERY_MS of the
 * last one); a client that was offline comes back online with an event.
 */
export async function touch(sys: ModuleContext, client: Row, now: Date): Promise<void> {
  const recent = typeof client.lastSeenAt === 'string' && now.getTime() - new Date(client.lastSeenAt).getTime() < TOUCH_EVERY_MS;
  if (recent && client.presence === 'online') return;
  await sys.transaction(async (tx) => {
    const row = await tx.data('AiClient').lock(client.id);
    const online = isOnline(row.lastSeenAt, now);
    // fell silent and the sweep has not recorded it yet: record it now, so online and offline stay paired
    if (row.presence === 'online' && !online) await goOffline(tx, row, now);
    await tx.data('AiClient').update(row.id, {}, { set: { lastSeenAt: now, presence: 'online' } });
    if (!online || row.presence !== 'online') await tx.emit('ai.client.online', { entityId: row.id, payload: { clientId: row.id, at: now.toISOString() } });
  });
}

/** Records a client as offline (inside a transaction holding its row) and releases its leased jobs. */
async function goOffline(tx: ModuleContext, client: Row, now: Date): Promise<void> {
  const released = await releaseJobsOf(tx, client.id, now, 'the client went offline');
  await tx.data('AiClient').update(client.id, {}, { set: { presence: 'offline' } });
  await tx.emit('ai.client.offline', { entityId: client.id, payload: { clientId: client.id, lastSeenAt: client.lastSeenAt ?? null, releasedJobs: released } });
}

/** Every minute, per tenant: clients silent for 15 minutes go offline; expired leases return their jobs. */
export const presenceSweep: JobDefinition = {
  cron: '* * * * *',
  attempts: 1,
  async handle(ctx) {
    const now = ctx.now();
    const cutoff = new Date(now.getTime() - OFFLINE_AFTER_MS).toISOString();
    for (;;) {
      const silent = await ctx.data('AiClient').find({ presence: 'online', $or: [{ lastSeenAt: null }, { lastSeenAt: { $lte: cutoff } }] }, { limit: SWEEP_BATCH });
      for (const c of silent) {
        await ctx.transaction(async (tx) => {
          const row = await tx.data('AiClient').lock(c.id);
          if (row.presence === 'online' && !isOnline(row.lastSeenAt, now)) await goOffline(tx, row, now);
        });
      }
      if (silent.length < SWEEP_BATCH) break;
    }
    await expireLeases(ctx, now);
  },
};
