// Report types: a registry, so other parts of the module add theirs (client
// activity) with registerReportType() without editing this file. A type
// declares its parameters (TypeBox, checked on every write of a definition),
// computes its result inside the context it is given (the report owner's
// scope) and names the figures a run is compared by.
import Value from 'typebox/value';
import { Type, type ModuleContext } from '../../core/plugin-api.ts';
import type { TSchema } from 'typebox';

export interface ReportRange {
  /** null: from the beginning */
  from: Date | null;
  to: Date;
}

export interface ReportType {
  name: string;
  title: string;
  /** what it computes and how it reads the range */
  description: string;
  /** its parameters: an object schema whose properties are all optional (null stands for {}) */
  parameters: TSchema;
  run(ctx: ModuleContext, parameters: Record<string, unknown>, range: ReportRange): Promise<Record<string, unknown>>;
  /** numbers a run is compared by: "total", "category.done", "open.<user id>" … */
  figures(result: Record<string, unknown>): Record<string, number>;
}

const types = new Map<string, ReportType>();

export function registerReportType(type: ReportType): void {
  if (types.has(type.name)) throw new Error(`report type "${type.name}" is registered twice`);
  types.set(type.name, type);
}

export const reportType = (name: string): ReportType | undefined => types.get(name);
export const reportTypes = (): ReportType[] => [...types.values()];

/** What is wrong with `parameters` for the type: { path, message } per fault (paths under /parameters). */
export function parameterProblems(type: ReportType, parameters: unknown): { path: string; message: string }[] {
  const value = parameters ?? {};
  if (Value.Check(type.parameters, value)) return [];
  const seen = new Map<string, string>();
  for (const e of Value.Errors(type.parameters, value)) {
    const extra = (e.params as { additionalProperties?: string[] }).additionalProperties;
    // an unknown property is reported once, named, not also as "schema is false"
    if (e.keyword === 'boolean') continue;
    const path = `/parameters${e.instancePath}${extra ? `/${extra[0]}` : ''}`;
    if (!seen.has(path)) seen.set(path, extra ? 'is no parameter of this report type' : e.message);
  }
  return [...seen].map(([path, message]) => ({ path, message }));
}

const CATEGORIES = ['backlog', 'todo', 'in_progress', 'done', 'cancelled'] as const;
const PRIORITIES = ['low', 'normal', 'high', 'critical'] as const;
const OPEN = { category: { $nin: ['done', 'cancelled'] } };
// x-entity: the console offers the projects the user may read (core/console/schema-form.ts)
const ProjectParam = Type.Optional(Type.String({ format: 'uuid', description: 'only the tasks of this project', 'x-entity': 'Project' }));
const inProject = (p: Record<string, unknown>) => (typeof p.projectId === 'string' ? { projectId: p.projectId } : {});
const counted = (v: unknown) => Number(v ?? 0);

registerReportType({
  name: 'task-summary',
  title: 'Task summary',
  description: 'Tasks created in the range (all before its end when it has no start), counted by status category and by priority',
  parameters: Type.Object({ projectId: ProjectParam }, { additionalProperties: false }),
  async run(ctx, p, range) {
    const created = { createdAt: { $lte: range.to.toISOString(), ...(range.from ? { $gte: range.from.toISOString() } : {}) } };
    const rows = await ctx.data('Task').aggregate({ groupBy: ['category', 'priority'], measures: { n: { count: true } }, where: { ...inProject(p), ...created } });
    const byCategory = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<string, number>;
    const byPriority = Object.fromEntries(PRIORITIES.map((c) => [c, 0])) as Record<string, number>;
    for (const r of rows) {
      byCategory[String(r.category)] += counted(r.n);
      byPriority[String(r.priority)] += counted(r.n);
    }
    return { total: Object.values(byCategory).reduce((a, b) => a + b, 0), byCategory, byPriority };
  },
  figures: (r) => ({
    total: counted(r.total),
    ...prefixed('category', r.byCategory),
    ...prefixed('priority', r.byPriority),
  }),
});

registerReportType({
  name: 'overdue-tasks',
  title: 'Overdue tasks',
  description: "Open tasks due before the range's end (the tenant's day then), most overdue first; the list holds at most `limit` of them, the count all",
  parameters: Type.Object(
    { projectId: ProjectParam, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'most tasks listed (default 100)' })) },
    { additionalProperties: false },
  ),
  async run(ctx, p, range) {
    const asOf = ctx.today(range.to);
    const where = { ...inProject(p), ...OPEN, dueDate: { $lt: asOf } };
    const tasks = ctx.data('Task');
    const count = await tasks.count(where);
    const rows = await tasks.find(where, { limit: typeof p.limit === 'number' ? p.limit : 100, orderBy: 'dueDate,number' });
    const dayMs = 86_400_000;
    const names = await userNames(
      ctx,
      rows.map((t) => t.assigneeId),
    );
    const listed = rows.map((t) => ({
      id: t.id,
      projectId: t.projectId ?? null,
      number: t.number ?? null,
      title: t.title,
      priority: t.priority,
      assigneeId: t.assigneeId ?? null,
      assigneeName: names.get(t.assigneeId) ?? null,
      dueDate: t.dueDate,
      daysOverdue: Math.round((Date.parse(asOf) - Date.parse(t.dueDate)) / dayMs),
    }));
    return { asOf, count, tasks: listed, truncated: count > listed.length };
  },
  figures: (r) => ({ count: counted(r.count) }),
});

registerReportType({
  name: 'workload',
  title: 'Workload per user',
  description: "Per assignee (id and name), as of the range's end: open tasks, the sum of their estimates (hours) and how many are overdue; unassigned tasks under null",
  parameters: Type.Object({ projectId: ProjectParam }, { additionalProperties: false }),
  async run(ctx, p, range) {
    const asOf = ctx.today(range.to);
    const rows = await ctx.data('Task').aggregate({
      groupBy: ['assigneeId'],
      measures: { open: { count: true }, estimate: { sum: 'estimate' }, overdue: { count: true, where: { dueDate: { $lt: asOf } } } },
      where: { ...inProject(p), ...OPEN },
      orderBy: '-open',
      limit: 10_000,
    });
    const names = await userNames(
      ctx,
      rows.map((r) => r.assigneeId),
    );
    const items = rows.map((r) => ({
      assigneeId: (r.assigneeId as string | null) ?? null,
      assigneeName: names.get(r.assigneeId) ?? null,
      open: counted(r.open),
      estimate: String(r.estimate),
      overdue: counted(r.overdue),
    }));
    return { asOf, items };
  },
  figures(r) {
    const out: Record<string, number> = { open: 0, overdue: 0, estimate: 0 };
    for (const i of (r.items as { assigneeId: string | null; open: number; estimate: string; overdue: number }[]) ?? []) {
      const who = i.assigneeId ?? 'unassigned';
      Object.assign(out, { [`open.${who}`]: i.open, [`overdue.${who}`]: i.overdue, [`estimate.${who}`]: Number(i.estimate) });
      out.open += i.open;
      out.overdue += i.overdue;
      out.estimate = Math.round((out.estimate + Number(i.estimate)) * 100) / 100;
    }
    return out;
  },
});

/**
 * id → name of the users among `ids`, as the owner may read them: a breakdown
 * by assignee names each one (an id alone means nothing to a reader); one the
 * owner may not read keeps its id only.
 */
async function userNames(ctx: ModuleContext, ids: unknown[]): Promise<Map<unknown, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => typeof id === 'string'))];
  if (!wanted.length || !ctx.can('read', 'User')) return new Map();
  const users = await ctx.data('User').find({ id: { $in: wanted } }, { limit: wanted.length });
  return new Map(users.filter((u) => typeof u.name === 'string' && u.name).map((u) => [u.id, u.name as string]));
}

function prefixed(prefix: string, values: unknown): Record<string, number> {
  return Object.fromEntries(Object.entries((values ?? {}) as Record<string, unknown>).map(([k, v]) => [`${prefix}.${k}`, counted(v)]));
}
