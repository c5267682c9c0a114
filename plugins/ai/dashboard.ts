// The AI dashboard: a list of sections from a registry, so other parts of the
// module (clients online/offline, jobs by state) add theirs with
// registerDashboardSection() without editing this file. Each section computes
// its figures in the caller's scope; a section the caller may not see at all
// (ctx.can) is left out.
import { handler, Type, type ModuleContext } from '../../core/plugin-api.ts';

export interface DashboardSection {
  key: string;
  title: string;
  /** lower first */
  order: number;
  /** whether the caller sees the section (default: always) */
  visible?(ctx: ModuleContext): boolean;
  figures(ctx: ModuleContext): Promise<Record<string, unknown>>;
}

const sections = new Map<string, DashboardSection>();

export function registerDashboardSection(section: DashboardSection): void {
  if (sections.has(section.key)) throw new Error(`dashboard section "${section.key}" is registered twice`);
  sections.set(section.key, section);
}

const CATEGORIES = ['backlog', 'todo', 'in_progress', 'done', 'cancelled'];
const OPEN = { category: { $nin: ['done', 'cancelled'] } };
/** Last runs shown. */
const LAST_RUNS = 5;

registerDashboardSection({
  key: 'tasks',
  title: 'Tasks',
  order: 10,
  visible: (ctx) => ctx.can('read', 'Task'),
  async figures(ctx) {
    const today = ctx.today();
    const [row] = await ctx.data('Task').aggregate({
      measures: {
        total: { count: true },
        overdue: { count: true, where: { ...OPEN, dueDate: { $lt: today } } },
        myOpen: { count: true, where: { ...OPEN, assigneeId: ctx.userId } },
        ...Object.fromEntries(CATEGORIES.map((c) => [c, { count: true, where: { category: c } }])),
      },
    });
    const n = (k: string) => Number(row?.[k] ?? 0);
    return { total: n('total'), byCategory: Object.fromEntries(CATEGORIES.map((c) => [c, n(c)])), overdue: n('overdue'), myOpen: n('myOpen') };
  },
});

registerDashboardSection({
  key: 'reports',
  title: 'Last report runs',
  order: 50,
  visible: (ctx) => ctx.can('read', 'AiReportRun'),
  async figures(ctx) {
    const runs = ctx.data('AiReportRun');
    const rows = await runs.find({}, { limit: LAST_RUNS, orderBy: '-startedAt' });
    const reports = new Map((await ctx.data('AiReport').find({ id: { $in: [...new Set(rows.map((r) => r.reportId))] } }, { limit: LAST_RUNS })).map((r) => [r.id, r.name]));
    return {
      failed: await runs.count({ status: 'failed' }),
      last: rows.map((r) => ({
        id: r.id,
        reportId: r.reportId,
        reportName: reports.get(r.reportId) ?? null,
        type: r.type,
        status: r.status,
        startedAt: runs.toDto(r).startedAt,
        triggeredBy: r.triggeredBy,
      })),
    };
  },
});

export const getAiDashboard = handler(
  {
    response: {
      200: Type.Object(
        {
          sections: Type.Array(
            Type.Object(
              {
                key: Type.String({ description: 'tasks, reports, and those other parts add (clients, jobs)' }),
                title: Type.String(),
                figures: Type.Record(Type.String(), Type.Unknown(), { description: "the section's figures" }),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false, description: "The AI dashboard's sections, over what the caller can read" },
      ),
    },
  },
  async (ctx) => {
    const shown = [...sections.values()].filter((s) => s.visible?.(ctx) ?? true).sort((a, b) => a.order - b.order);
    return { sections: await Promise.all(shown.map(async (s) => ({ key: s.key, title: s.title, figures: await s.figures(ctx) }))) };
  },
);
