// Projects: the creator becomes the owner and the project gets the default
// status flow; its key is fixed once it has tasks; archiving makes it and
// everything in it read-only (rules.ts) and hides it from default lists
// (manifest listDefaults).
import { etag, handler, httpError, Type, type EntityHooks } from '../../core/plugin-api.ts';
import { unprocessable } from './rules.ts';

/** The flow a new project starts with (and the tenant's default flow, for personal tasks). */
export const DEFAULT_FLOW = [
  { name: 'To Do', category: 'todo', position: 0 },
  { name: 'In Progress', category: 'in_progress', position: 1 },
  { name: 'Completed', category: 'done', position: 2 },
];

export const projectHooks: EntityHooks = {
  problems: { update: ['STATE_LOCKED', 'UNPROCESSABLE'], delete: ['STATE_LOCKED'] },
  async beforeWrite(ctx, { op, input, before }) {
    if (op === 'create' || !before) return;
    // archive/unarchive change nothing a body names (they set archived themselves)
    if (before.archived && (op === 'delete' || Object.keys(input ?? {}).length)) {
      throw httpError('STATE_LOCKED', `project ${before.key} is archived: unarchive it first`);
    }
    if (input?.key !== undefined && input.key !== before.key && (await ctx.system().data('Task').count({ projectId: before.id }))) {
      throw unprocessable('/key', 'is fixed once the project has tasks (their numbers show it)');
    }
  },
  async afterWrite(ctx, { op, after }) {
    if (op !== 'create' || !after) return;
    // the caller may not yet read what they are about to own: the system writes the first rows
    const sys = ctx.system();
    if (ctx.userId) await sys.data('ProjectMember').create({ userId: ctx.userId, role: 'owner' }, { internal: { projectId: after.id } });
    for (const status of DEFAULT_FLOW) await sys.data('TaskStatus').create({ ...status, projectId: after.id });
  },
};

const ProjectParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

function archiving(archived: boolean) {
  return handler(
    { params: ProjectParams, response: { 200: Type.Ref('PmProject', { description: archived ? 'The project, archived' : 'The project, open again', headers: ['ETag'] }) } },
    async (ctx, request, reply) => {
      const row = await ctx.transaction(async (tx) => {
        const project = await tx.data('Project').lock(request.params.id);
        if (project.archived === archived) return project;
        return tx.data('Project').update(project.id, {}, { set: { archived, archivedAt: archived ? new Date() : null }, auditAction: archived ? 'archive' : 'unarchive' });
      });
      reply.header('etag', etag(row.version));
      return ctx.data('Project').toDto(row);
    },
  );
}

export const archiveProject = archiving(true);
export const unarchiveProject = archiving(false);
