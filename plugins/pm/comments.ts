// Comments on tasks: the author is the caller; `@name` mentions resolve to
// users who can read the task; an edit changes only the text and keeps the
// previous one as a revision, in the edit's transaction; a delete leaves a
// tombstone (deletedAt set, body empty) so a thread keeps its order, its text
// kept in the history. The body stays a required, non-null string in the
// API: create and edits still need text, and a tombstone is told by deletedAt.
import { handler, httpError, Type, validationError, type EntityHooks, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { readersOf, taskOf } from './watchers.ts';

// "@ada" or "@ada.lovelace", not the "@example" of "x@example.com"
const MENTION = /(?<![\p{L}\p{N}_.@-])@([\p{L}\p{N}_][\p{L}\p{N}_.-]*)/gu;

/** The lower-case `@name` tokens of a markdown text (trailing dots and dashes are punctuation). */
function mentionTokens(body: string): Set<string> {
  return new Set([...body.matchAll(MENTION)].map((m) => m[1].replace(/[.-]+$/, '').toLowerCase()).filter(Boolean));
}

/** How `@name` can mean a user: the local part of their e-mail, their name, their name without spaces. */
function namesOf(user: Row): string[] {
  const name = typeof user.name === 'string' ? user.name.toLowerCase() : '';
  const email = typeof user.email === 'string' ? user.email.toLowerCase() : '';
  return [email.split('@')[0], name, name.replace(/\s+/g, '')].filter(Boolean);
}

/** Ids of the users a text mentions among those who can read the task; unknown mentions stay plain text. */
async function resolveMentions(ctx: ModuleContext, task: Row, body: string): Promise<string[]> {
  const tokens = mentionTokens(body);
  if (!tokens.size) return [];
  const readers = [...(await readersOf(ctx, task))];
  if (!readers.length) return [];
  const users = await ctx
    .system()
    .data('User')
    .find({ id: { $in: readers } }, { limit: readers.length });
  return users.filter((u) => namesOf(u).some((n) => tokens.has(n))).map((u) => u.id as string);
}

export const commentHooks: EntityHooks = {
  async beforeWrite(ctx, { op, input, before }) {
    if (op === 'delete' || !input) return;
    if (op === 'create') {
      const task = await taskOf(ctx, input.taskId);
      // an unknown task is left to the reference check (400)
      const mentions = task && typeof input.body === 'string' ? await resolveMentions(ctx, task, input.body) : [];
      return { ...input, authorId: ctx.userId, mentions };
    }
    const old = before!;
    if (old.deletedAt) throw httpError('CONFLICT', `comment ${old.id} is deleted: a tombstone is not edited`);
    if (input.taskId !== undefined && input.taskId !== old.taskId) throw validationError([{ path: '/taskId', message: 'a comment stays on its task: only its text changes' }]);
    if (input.body === undefined || input.body === old.body) return input;
    const editedAt = new Date().toISOString();
    await keepRevision(ctx, old, editedAt);
    const task = await taskOf(ctx, old.taskId);
    return { ...input, editedAt, mentions: task ? await resolveMentions(ctx, task, input.body as string) : [] };
  },
};

/** The text `old` had, as a revision by the caller at `at`: in the caller's transaction, as the system (revisions have no create grant). */
async function keepRevision(ctx: ModuleContext, old: Row, at: string): Promise<void> {
  await ctx.system().data('CommentRevision').create({ commentId: old.id, taskId: old.taskId, body: old.body, editedById: ctx.userId, editedAt: at });
}

const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

const Revision = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    commentId: Type.String({ format: 'uuid' }),
    taskId: Type.String({ format: 'uuid' }),
    body: Type.Union([Type.String(), Type.Null()], { description: 'the text before the edit' }),
    editedById: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'who replaced it' }),
    editedAt: Type.String({ format: 'date-time', description: 'when' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    version: Type.Integer(),
  },
  { additionalProperties: false },
);

export const listCommentRevisions = handler(
  {
    params: IdParams,
    querystring: Type.Object(
      {
        page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1 })),
        size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        { items: Type.Array(Revision), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() },
        { additionalProperties: false, description: 'The earlier texts, newest first' },
      ),
    },
  },
  async (ctx, request) => {
    // 404 unless the caller may read the comment
    const comment = await ctx.data('Comment').read(request.params.id);
    const { page = 1, size = 50 } = request.query;
    const list = await ctx.data('CommentRevision').list({ page, size, sort: '-editedAt' }, { commentId: comment.id });
    return { items: list.items, page, size, total: list.total };
  },
);

export const deleteComment = handler(
  { params: IdParams, response: { 204: Type.Null({ description: 'The comment is a tombstone now; its text is in its history' }) }, problems: ['PRECONDITION_FAILED'] },
  async (ctx, request, reply) => {
    await ctx.transaction(async (tx) => {
      const comments = tx.data('Comment');
      // 404 unless the caller can read it; locked, so a concurrent edit waits and then meets the tombstone
      const old = await comments.lock(request.params.id);
      if (old.deletedAt) throw httpError('CONFLICT', `comment ${old.id} is deleted already`);
      const at = new Date().toISOString();
      // through the update scope: only the author (a member of the task's project) may
      await comments.update(old.id, {}, { ifMatch: request.headers['if-match'], set: { body: '', mentions: [], deletedAt: at } });
      await keepRevision(tx, old, at);
    });
    return reply.code(204).send();
  },
);
