// The project reports and the project dashboard: progress per project, how
// tasks spread over statuses, assignees or priorities, each assignee's
// workload, and the dashboard's figures. Every number is counted in SQL by the
// kernel's aggregates (ctx.data(e).aggregate), inside the caller's read scope:
// a member counts the tasks of their projects (and their personal tasks), a
// non-member nothing. "Today" is the tenant's date (ctx.today()). Assignees
// come with their names, read from the user directory as the caller.
import { addDays, handler, Type, validationError, type AggregateRow, type ModuleContext } from '../../core/plugin-api.ts';

const CATEGORIES = ['backlog', 'todo', 'in_progress', 'done', 'cancelled'] as const;
type Category = (typeof CATEGORIES)[number];
/** a task still to do: neither done nor cancelled (one whose status has no category yet counts as open) */
const OPEN = { category: { $nin: ['done', 'cancelled'] } };
const MAX_PROJECTS = 1000;

const Uuid = (description: string) => Type.String({ format: 'uuid', description });
const Day = (description: string) => Type.String({ format: 'date', description, examples: ['2026-11-23'] });

const FIRST = Date.parse('0001-01-01T00:00:00Z');
const LAST = Date.parse('9999-12-31T00:00:00Z');
const DAY_MS = 86_400_000;

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const ByCategory = Type.Object(Object.fromEntries(CATEGORIES.map((c) => [c, Count(`tasks in a ${c} status`)])) as Record<Category, ReturnType<typeof Count>>, {
  additionalProperties: false,
  description: 'task counts by the category of their status',
});

// ---- dates in the tenant's calendar -------------------------------------------------------------

/** How far `zone`'s wall clock is ahead of UTC at `at`, in milliseconds. */
function zoneOffset(at: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(at));
  const v = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const wall = new Date(0);
  wall.setUTCFullYear(v('year'), v('month') - 1, v('day'));
  wall.setUTCHours(v('hour'), v('minute'), v('second'));
  return wall.getTime() - Math.floor(at / 1000) * 1000;
}

/** The instant `date` begins in `zone` (ISO), or undefined beyond the instants PostgreSQL stores. */
function startOf(date: string, zone: string): string | undefined {
  const midnight = Date.parse(`${date}T00:00:00Z`);
  // twice: the offset at the guess, then at the result (a day that starts in another offset than the one before)
  let at = midnight - zoneOffset(midnight, zone);
  at = midnight - zoneOffset(at, zone);
  // a day whose midnight the clocks skip (America/Santiago in September) starts when they land
  if (at + zoneOffset(at, zone) < midnight) at += zoneOffset(at + 6 * 3_600_000, zone) - zoneOffset(at, zone);
  return at < FIRST || at > LAST + DAY_MS - 1 ? undefined : new Date(at).toISOString();
}

/** A condition on an instant field: from the start of day `from` to the end of day `to` in `zone`. */
function daysOf(field: string, from: string, to: string, zone: string): Record<string, unknown> {
  const start = startOf(from, zone);
  const end = to < '9999-12-31' ? startOf(addDays(to, 1), zone) : undefined;
  return { [field]: { $ne: null, ...(start ? { $gte: start } : {}), ...(end ? { $lt: end } : {}) } };
}

const num = (row: AggregateRow | undefined, key: string) => Number(row?.[key] ?? 0);

/** The names of the users `ids` names whom the caller may read (PM's codes grant the user directory); others stay unnamed. */
async function userNames(ctx: ModuleContext, ids: (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => typeof id === 'string'))];
  if (!wanted.length || !ctx.can('read', 'User')) return new Map();
  const users = await ctx.data('User').find({ id: { $in: wanted } }, { limit: wanted.length });
  return new Map(users.map((u) => [u.id as string, String(u.name || u.email || u.id)]));
}

// ---- GET /api/pm/reports/progress ---------------------------------------------------------------

const ProjectProgress = Type.Object(
  {
    projectId: Type.String({ format: 'uuid' }),
    key: Type.String(),
    name: Type.String(),
    status: Type.String({ description: 'planning, active or completed' }),
    archived: Type.Boolean(),
    total: Count('every task of the project'),
    open: Count('tasks neither done nor cancelled'),
    done: Count('tasks in a done status'),
    cancelled: Count('tasks in a cancelled status'),
    overdue: Count('open tasks whose due date is before today'),
    percentDone: Type.Number({ minimum: 0, maximum: 100, description: 'done ÷ (total − cancelled) in percent, one decimal; 0 without such tasks' }),
    byCategory: ByCategory,
  },
  { additionalProperties: false },
);

export const getProgressReport = handler(
  {
    querystring: Type.Object(
      {
        projectId: Type.Optional(Uuid('only this project (empty when the caller cannot read it)')),
        archived: Type.Optional(Type.Boolean({ description: 'include archived projects (default false; a projectId names any)' })),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        { today: Day("the tenant's date the overdue count is measured against"), projects: Type.Array(ProjectProgress) },
        { additionalProperties: false, description: 'Progress of each project the caller can read, by name' },
      ),
    },
  },
  async (ctx, request) => {
    const { projectId, archived } = request.query;
    const today = ctx.today();
    const where = projectId ? { id: projectId } : archived ? {} : { archived: { $ne: true } };
    const projects = await ctx.data('Project').find(where, { limit: MAX_PROJECTS, orderBy: 'name' });
    if (!projects.length) return { today, projects: [] };
    const rows = await ctx.data('Task').aggregate({
      groupBy: ['projectId', 'category'],
      measures: { n: { count: true }, overdue: { count: true, where: { ...OPEN, dueDate: { $lt: today } } } },
      where: { projectId: { $in: projects.map((p) => p.id as string) } },
      limit: 10_000,
    });
    return {
      today,
      projects: projects.map((p) => {
        const mine = rows.filter((r) => r.projectId === p.id);
        const byCategory = Object.fromEntries(
          CATEGORIES.map((c) => [
            c,
            num(
              mine.find((r) => r.category === c),
              'n',
            ),
          ]),
        ) as Record<Category, number>;
        const total = mine.reduce((sum, r) => sum + num(r, 'n'), 0);
        const counted = total - byCategory.cancelled;
        return {
          projectId: p.id as string,
          key: p.key as string,
          name: p.name as string,
          status: p.status as string,
          archived: p.archived === true,
          total,
          open: total - byCategory.done - byCategory.cancelled,
          done: byCategory.done,
          cancelled: byCategory.cancelled,
          overdue: mine.reduce((sum, r) => sum + num(r, 'overdue'), 0),
          percentDone: counted > 0 ? Math.round((byCategory.done / counted) * 1000) / 10 : 0,
          byCategory,
        };
      }),
    };
  },
);

// ---- GET /api/pm/reports/distribution -----------------------------------------------------------

const GROUPINGS = { status: 'statusId', assignee: 'assigneeId', priority: 'priority' } as const;

export const getTaskDistribution = handler(
  {
    querystring: Type.Object(
      {
        by: Type.Optional(Type.Enum(['status', 'assignee', 'priority'], { description: 'what tasks are counted by (default status)' })),
        projectId: Type.Optional(Uuid("only this project's tasks (default: every task the caller can read)")),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        {
          by: Type.String(),
          total: Count('tasks counted'),
          items: Type.Array(
            Type.Object(
              {
                key: Type.Union([Type.String(), Type.Null()], { description: 'the status id, assignee id or priority; null: none' }),
                count: Count('tasks'),
                name: Type.Optional(
                  Type.Union([Type.String(), Type.Null()], {
                    description: "by status: the status's name; by assignee: the user's name (null: nobody, or a user the caller cannot see)",
                  }),
                ),
                category: Type.Optional(Type.Union([Type.Enum([...CATEGORIES]), Type.Null()], { description: "by status: the status's category" })),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false, description: 'Task counts by status, assignee or priority, most first' },
      ),
    },
  },
  async (ctx, request) => {
    const by = request.query.by ?? 'status';
    const { projectId } = request.query;
    const field = GROUPINGS[by];
    const rows = await ctx.data('Task').aggregate({ groupBy: [field], measures: { n: { count: true } }, where: projectId ? { projectId } : {}, orderBy: '-n', limit: 10_000 });
    const items = rows.map((r) => ({ key: (r[field] as string | null) ?? null, count: num(r, 'n') }));
    const total = items.reduce((sum, i) => sum + i.count, 0);
    if (by === 'assignee') {
      const names = await userNames(
        ctx,
        items.map((i) => i.key),
      );
      return { by, total, items: items.map((i) => ({ ...i, name: (i.key && names.get(i.key)) || null })) };
    }
    if (by !== 'status') return { by, total, items };
    const ids = items.flatMap((i) => (i.key ? [i.key] : []));
    const statuses = ids.length ? await ctx.data('TaskStatus').find({ id: { $in: ids } }, { limit: ids.length }) : [];
    const named = new Map(statuses.map((s) => [s.id as string, s]));
    return {
      by,
      total,
      items: items.map((i) => ({ ...i, name: (named.get(i.key!)?.name as string | undefined) ?? null, category: (named.get(i.key!)?.category as Category | undefined) ?? null })),
    };
  },
);

// ---- GET /api/pm/reports/workload ---------------------------------------------------------------

export const getWorkload = handler(
  {
    querystring: Type.Object(
      {
        from: Type.Optional(Day('first day of the range (default today)')),
        to: Type.Optional(Day('last day of the range (default six days after from)')),
        projectId: Type.Optional(Uuid("only this project's tasks")),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        {
          from: Day('first day of the range'),
          to: Day('last day of the range'),
          items: Type.Array(
            Type.Object(
              {
                assigneeId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'null: tasks nobody is assigned' }),
                assigneeName: Type.Union([Type.String(), Type.Null()], { description: "the assignee's name; null: nobody, or a user the caller cannot see" }),
                open: Count('open tasks (neither done nor cancelled), whenever due'),
                openEstimate: Type.String({ description: 'hours estimated for the open tasks', examples: ['12.50'] }),
                dueInRange: Count('tasks due in the range, cancelled ones aside'),
                completedInRange: Count("tasks completed in the range (the tenant's days)"),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false, description: "Each assignee's workload: most open tasks first" },
      ),
    },
  },
  async (ctx, request) => {
    const from = request.query.from ?? ctx.today();
    const to = request.query.to ?? addDays(from, 6);
    if (to < from) throw validationError([{ path: '/to', message: 'is before from' }]);
    const due = { category: { $ne: 'cancelled' }, dueDate: { $gte: from, $lte: to } };
    const completed = daysOf('completedAt', from, to, ctx.timeZone);
    const rows = await ctx.data('Task').aggregate({
      groupBy: ['assigneeId'],
      measures: {
        open: { count: true, where: OPEN },
        openEstimate: { sum: 'estimate', where: OPEN },
        dueInRange: { count: true, where: due },
        completedInRange: { count: true, where: completed },
      },
      where: { ...(request.query.projectId ? { projectId: request.query.projectId } : {}), $or: [OPEN, due, completed] },
      orderBy: '-open',
      limit: 10_000,
    });
    const names = await userNames(
      ctx,
      rows.map((r) => (r.assigneeId as string | null) ?? null),
    );
    return {
      from,
      to,
      items: rows.map((r) => ({
        assigneeId: (r.assigneeId as string | null) ?? null,
        assigneeName: names.get(r.assigneeId as string) ?? null,
        open: num(r, 'open'),
        openEstimate: String(r.openEstimate),
        dueInRange: num(r, 'dueInRange'),
        completedInRange: num(r, 'completedInRange'),
      })),
    };
  },
);

// ---- GET /api/pm/dashboard ----------------------------------------------------------------------

export const getDashboard = handler(
  {
    response: {
      200: Type.Object(
        {
          today: Day("the tenant's date"),
          projectsByStatus: Type.Object(
            { planning: Count('projects being planned'), active: Count('active projects'), completed: Count('completed projects') },
            { additionalProperties: false, description: 'projects the caller can read, archived ones aside' },
          ),
          totalTasks: Count('tasks the caller can read'),
          myOpenTasks: Count('open tasks assigned to the caller'),
          overdueTasks: Count('open tasks due before today'),
          dueThisWeek: Count('open tasks due today or in the six days after'),
          completedLast7Days: Count('tasks completed in the last seven days (168 hours)'),
          tasksByCategory: ByCategory,
        },
        { additionalProperties: false, description: "The project dashboard's figures, over what the caller can read" },
      ),
    },
  },
  async (ctx) => dashboard(ctx),
);

async function dashboard(ctx: ModuleContext) {
  const today = ctx.today();
  const weekAgo = new Date(Date.now() - 7 * DAY_MS).toISOString();
  const projects = await ctx.data('Project').aggregate({ groupBy: ['status'], measures: { n: { count: true } }, where: { archived: { $ne: true } } });
  const tasks = await ctx.data('Task').aggregate({
    groupBy: ['category'],
    measures: {
      n: { count: true },
      // a client or the system has no tasks of its own
      ...(ctx.userId ? { mine: { count: true, where: { ...OPEN, assigneeId: ctx.userId } } } : {}),
      overdue: { count: true, where: { ...OPEN, dueDate: { $lt: today } } },
      dueThisWeek: { count: true, where: { ...OPEN, dueDate: { $gte: today, $lte: addDays(today, 6) } } },
      completed: { count: true, where: { completedAt: { $gte: weekAgo } } },
    },
  });
  const sum = (key: string) => tasks.reduce((s, r) => s + num(r, key), 0);
  const status = (s: string) =>
    num(
      projects.find((r) => r.status === s),
      'n',
    );
  return {
    today,
    projectsByStatus: { planning: status('planning'), active: status('active'), completed: status('completed') },
    totalTasks: sum('n'),
    myOpenTasks: sum('mine'),
    overdueTasks: sum('overdue'),
    dueThisWeek: sum('dueThisWeek'),
    completedLast7Days: sum('completed'),
    tasksByCategory: Object.fromEntries(
      CATEGORIES.map((c) => [
        c,
        num(
          tasks.find((r) => r.category === c),
          'n',
        ),
      ]),
    ) as Record<Category, number>,
  };
}
