// A project's recent activity on its board: GET /api/pm/activity rows (one per
// created or deleted row, one per changed field) in words, with who did it and
// the task it concerns. Ids in the values are named where the board knows them
// (statuses, people); long texts and structured values are not repeated. The
// words are the module's texts: activity.noun.<entity>, activity.field.<field>.
import { problemText, type PageApi } from '../../../core/plugin-api.ts';
import { humanize, userNames } from './page-kit.ts';

/** rows shown; the activity log has the rest */
const ACTIVITY_ROWS = 15;
const LONG = 80;
const PEOPLE = new Set(['assigneeId', 'reporterId', 'leadId', 'userId', 'authorId', 'uploaderId']);
const QUIET = new Set(['description', 'body', 'mentions']);

interface ActivityRow {
  taskId: string | null;
  entity: string;
  action: string;
  field: string | null;
  before: unknown;
  after: unknown;
  actorId: string | null;
  at: string;
}

export interface BoardNames {
  /** task id → "WEB-4" */
  tasks: Map<string, string>;
  /** status id → name */
  statuses: Map<string, string>;
}

export async function recentActivity(api: PageApi, projectId: string, known: BoardNames) {
  const res = await api.get<{ items: ActivityRow[] }>(`/api/pm/activity?projectId=${projectId}&size=${ACTIVITY_ROWS}`);
  // not allowed to read it: the section is left out
  if (!res.ok) return { activity: null, activityProblem: res.status === 403 ? null : problemText(res.body), activityHidden: res.status === 403 };
  const rows = res.body.items;
  const people = await userNames(
    api,
    rows.flatMap((r) => [r.actorId, ...(r.field && PEOPLE.has(r.field) ? [r.before, r.after] : [])]).filter((v): v is string => typeof v === 'string'),
  );
  const value = (field: string, v: unknown): string | null => {
    if (v === null || v === undefined || v === '') return api.text('activity.value.none');
    if (typeof v === 'boolean') return api.text(`activity.value.${v}`);
    if (typeof v !== 'string' && typeof v !== 'number') return null;
    if (field === 'statusId') return known.statuses.get(String(v)) ?? null;
    if (PEOPLE.has(field)) return people.get(String(v)) ?? null;
    if (field.endsWith('Id')) return null;
    const text = String(v);
    return text.length > LONG ? null : text;
  };
  const change = (r: ActivityRow): string => {
    const noun = api.text(`activity.noun.${r.entity}`, undefined, humanize(r.entity).toLowerCase());
    if (r.action !== 'updated' || !r.field) return api.text(`activity.action.${r.action}`, { noun }, `${humanize(r.action)} ${noun}`);
    const field = api.text(`activity.field.${r.field}`, undefined, humanize(r.field).toLowerCase());
    const from = QUIET.has(r.field) ? null : value(r.field, r.before);
    const to = QUIET.has(r.field) ? null : value(r.field, r.after);
    return from !== null && to !== null ? api.text('activity.changedFromTo', { noun, field, from, to }) : api.text('activity.changed', { noun, field });
  };
  return {
    activity: rows.map((r) => ({
      at: r.at,
      when: `${r.at.slice(0, 10)} ${r.at.slice(11, 16)}`,
      who: r.actorId ? (people.get(r.actorId) ?? api.text('common.hiddenUser')) : api.text('activity.system'),
      task: r.taskId ? { ref: known.tasks.get(r.taskId) ?? api.text('activity.someTask'), url: `/pm/tasks/${r.taskId}` } : null,
      change: change(r),
    })),
    activityProblem: null,
    activityHidden: false,
  };
}
