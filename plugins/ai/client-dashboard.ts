// The AI dashboard's client sections: clients online, offline and revoked,
// and jobs by state, over what the caller can read (their own clients and
// jobs with erp:ai:view, the tenant's with erp:ai:admin). Presence is counted
// in SQL as presence.ts computes it: online while the last call is less than
// 15 minutes old, and only an active client is online.
import type { ModuleContext } from '../../core/plugin-api.ts';
import { registerDashboardSection, type DashboardSection } from './dashboard.ts';
import { JOB_STATES } from './jobs.ts';
import { OFFLINE_AFTER_MS } from './presence.ts';

export const clientsSection: DashboardSection = {
  key: 'clients',
  title: 'Clients',
  order: 20,
  visible: (ctx) => ctx.can('read', 'AiClient'),
  async figures(ctx: ModuleContext) {
    const cutoff = new Date(ctx.now().getTime() - OFFLINE_AFTER_MS).toISOString();
    const [row] = await ctx.data('AiClient').aggregate({
      measures: {
        total: { count: true },
        online: { count: true, where: { status: 'active', lastSeenAt: { $gt: cutoff } } },
        offline: { count: true, where: { status: 'active', $or: [{ lastSeenAt: null }, { lastSeenAt: { $lte: cutoff } }] } },
        revoked: { count: true, where: { status: 'revoked' } },
      },
    });
    const n = (k: string) => Number(row?.[k] ?? 0);
    return { total: n('total'), online: n('online'), offline: n('offline'), revoked: n('revoked') };
  },
};

export const jobsSection: DashboardSection = {
  key: 'jobs',
  title: 'Client jobs',
  order: 30,
  visible: (ctx) => ctx.can('read', 'AiJob'),
  async figures(ctx: ModuleContext) {
    const [row] = await ctx.data('AiJob').aggregate({
      measures: { total: { count: true }, ...Object.fromEntries(JOB_STATES.map((s) => [s, { count: true, where: { state: s } }])) },
    });
    const n = (k: string) => Number(row?.[k] ?? 0);
    return { total: n('total'), byState: Object.fromEntries(JOB_STATES.map((s) => [s, n(s)])) };
  },
};

registerDashboardSection(clientsSection);
registerDashboardSection(jobsSection);
