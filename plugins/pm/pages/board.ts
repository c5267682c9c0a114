// A project's board (/pm/projects/:id/board, linked from the project's page):
// its tasks in columns by the statuses of the project's flow, and its recent
// activity. assets/board.js moves a card by drag and drop or with the card's
// "Move to" select, through PATCH /api/pm/tasks/:id with the card's version;
// each card offers only the statuses GET /api/pm/tasks/:id/transitions allows.
import { pageError, required, scriptJson, type ConsolePage, type PageApi } from '../../../core/plugin-api.ts';
import { recentActivity } from './board-activity.ts';
import { humanize, UUID } from './page-kit.ts';

/** tasks one board shows; a larger project says so and points to the task list */
const MAX_TASKS = 500;
const COLOR = /^#[0-9a-f]{3,8}$/i;
/** what assets/board.js says about a move, passed in the user's language; the script fills in the {placeholders} */
export const SCRIPT_TEXTS = [
  'board.move.moved',
  'board.move.unknownStatus',
  'board.move.stale',
  'board.move.reload',
  'board.move.forbidden',
  'board.move.forbiddenWhy',
  'board.move.refused',
  'board.move.refusedWhy',
  'board.move.failed',
  'board.move.noAnswer',
] as const;

interface Status {
  id: string;
  name: string;
  color: string | null;
  category: string;
}
interface Task {
  id: string;
  number: number | null;
  title: string;
  statusId: string | null;
  priority: string;
  assigneeId: string | null;
  dueDate: string | null;
  version: number;
  _embedded?: { assignee?: { name?: string; email?: string } | null };
}
type List<T> = { items: T[]; total: number };

export const boardPage: ConsolePage = {
  view: new URL('../views/board.hbs', import.meta.url),
  title: 'Board',
  async load(api, query, params) {
    const id = params.id ?? '';
    if (!UUID.test(id)) throw pageError(404, api.text('board.noSuchProject'));
    const project = required(await api.get<Record<string, any>>(`/api/pm/projects/${id}`));
    const mine = query.assignee === 'me';
    const wanted = new URLSearchParams({ projectId: id, size: String(MAX_TASKS), sort: '-priority,dueDate,number', include: 'assigneeId', ...(mine ? { assigneeId: 'me' } : {}) });
    const [statusList, taskList, overdueList] = await Promise.all([
      api.get<List<Status>>(`/api/pm/status?projectId=${id}&size=1000`),
      api.get<List<Task>>(`/api/pm/tasks?${wanted}`),
      api.get<List<{ id: string }>>(`/api/pm/tasks?projectId=${id}&overdue=true&fields=id&size=${MAX_TASKS}`),
    ]);
    const statuses = required(statusList).items;
    const tasks = required(taskList);
    const overdue = new Set(overdueList.ok ? overdueList.body.items.map((t) => t.id) : []);
    const archived = project.archived === true;
    const moves = archived ? new Map<string, Status[]>() : await movesByStatus(api, statuses, tasks.items);
    const ref = (t: Task) => (t.number === null ? t.title : `${project.key}-${t.number}`);
    const card = (t: Task) => {
      const allowed = moves.get(t.statusId ?? '') ?? [];
      return {
        id: t.id,
        ref: ref(t),
        title: t.title,
        url: `/pm/tasks/${t.id}`,
        version: t.version,
        priority: t.priority,
        priorityLabel: api.text(`priority.${t.priority}`, undefined, humanize(t.priority)),
        assignee: t._embedded?.assignee ? t._embedded.assignee.name || t._embedded.assignee.email : t.assigneeId ? api.text('board.card.hiddenAssignee') : null,
        due: t.dueDate,
        overdue: overdue.has(t.id),
        movable: allowed.length > 0,
        moves: allowed.map((s) => ({ id: s.id, name: s.name })),
      };
    };
    const columns = statuses.map((s) => {
      const cards = tasks.items.filter((t) => t.statusId === s.id).map(card);
      return { id: s.id, name: s.name, color: s.color && COLOR.test(s.color) ? s.color : null, count: cards.length, cards };
    });
    const known = { tasks: new Map(tasks.items.map((t) => [t.id, ref(t)])), statuses: new Map(statuses.map((s) => [s.id, s.name])) };
    const status = String(project.status ?? '');
    return {
      project: { key: project.key, name: project.name, status: api.text(`projectStatus.${status}`, undefined, humanize(status)), targetDate: project.targetDate, archived, url: `/pm/projects/${id}` },
      boardUrl: `/pm/projects/${id}/board`,
      mine,
      columns,
      anyMovable: columns.some((c) => c.cards.some((k) => k.movable)),
      truncated: tasks.total > tasks.items.length ? { shown: tasks.items.length, total: tasks.total } : null,
      ...(await recentActivity(api, id, known)),
      board: scriptJson({ statuses: Object.fromEntries(known.statuses), texts: Object.fromEntries(SCRIPT_TEXTS.map((key) => [key, api.text(key)])) }),
    };
  },
};

/**
 * The statuses a task of each column may move to. What a flow allows depends
 * on the task's status and the reader's project role, not on the task itself,
 * so the first task of each column answers for all of it (one read per column,
 * not per card); the script reads a card's own after it moves.
 */
async function movesByStatus(api: PageApi, statuses: Status[], tasks: Task[]): Promise<Map<string, Status[]>> {
  const moves = new Map<string, Status[]>();
  await Promise.all(
    statuses.map(async (s) => {
      const first = tasks.find((t) => t.statusId === s.id);
      if (!first) return;
      const res = await api.get<List<Status>>(`/api/pm/tasks/${first.id}/transitions`);
      moves.set(s.id, res.ok ? res.body.items : []);
    }),
  );
  return moves;
}
