// Comments on tasks: the author is the caller, @mentions resolve to users who
// can read the task, edits keep the earlier text as history (who, when, what),
// a delete leaves a tombstone in the thread; project roles decide who
// comments and edits; other projects' and tenants' comments are unknown.
import t from 'tap';
import { caller, handle, ok, socialWorld } from './social-api.ts';

const w = await socialWorld(t);
const task = await w.task();
const comment = (who = w.member, body = 'First!') => ok(who.call('POST', '/api/pm/comments', { taskId: task.id, body }));

t.test('the author is the caller; mentions resolve to users who can read the task, unknown ones stay text', async (t) => {
  const body = `Ping @${handle(w.owner).toUpperCase()} and @${handle(w.viewer)}. Not @${handle(w.outsider)}, not @nobody, not mail@${handle(w.owner)}.test`;
  const c = await comment(w.member, body);
  t.equal(c.authorId, w.member.id);
  t.equal(c.body, body, 'the text is kept as written');
  t.same([...c.mentions].sort(), [w.owner.id, w.viewer.id].sort(), 'members, case-insensitive; the outsider cannot read the task');
  t.equal(c.editedAt, null);
  t.equal(c.deletedAt, null);
  const refused = await w.member.call('POST', '/api/pm/comments', { taskId: task.id, body: 'x', authorId: w.owner.id });
  t.equal(refused.statusCode, 400, 'authorId is read-only');
  t.equal((await w.member.call('POST', '/api/pm/comments', { taskId: task.id, body: 'x', mentions: [w.owner.id] })).statusCode, 400, 'so are mentions');
});

t.test('edits keep the previous text as history: who, when, what; newest first', async (t) => {
  const c = await comment(w.member, 'one');
  const first = await w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: 'two' });
  t.equal(first.statusCode, 200);
  t.equal(first.json().body, 'two');
  t.ok(first.json().editedAt, 'marked edited');
  const second = await ok(w.member.call('PUT', `/api/pm/comments/${c.id}`, { taskId: task.id, body: `three @${handle(w.owner)}` }, { 'if-match': first.headers.etag as string }));
  t.same(second.mentions, [w.owner.id], 'an edit resolves its mentions again');
  t.equal((await w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: `three @${handle(w.owner)}` })).statusCode, 200, 'the same text again');
  const history = await ok(w.viewer.call('GET', `/api/pm/comments/${c.id}/history`));
  t.equal(history.total, 2, 'an edit that changed nothing is no revision');
  t.same(
    history.items.map((r: any) => r.body),
    ['two', 'one'],
    'newest first',
  );
  t.match(history.items[0], { commentId: c.id, taskId: task.id, editedById: w.member.id, editedAt: second.editedAt });
  t.equal(history.items[1].editedAt, first.json().editedAt);
  t.match(history, { page: 1, size: 50 });
  t.same(
    (await ok(w.viewer.call('GET', `/api/pm/comments/${c.id}/history?size=1&page=2`))).items.map((r: any) => r.body),
    ['one'],
  );
  const moved = await w.member.call('PATCH', `/api/pm/comments/${c.id}`, { taskId: (await w.task()).id });
  t.equal(moved.statusCode, 400, 'a comment stays on its task');
  t.equal(moved.json().code, 'VALIDATION_FAILED');
  const stale = await w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: 'four' }, { 'if-match': first.headers.etag as string });
  t.equal(stale.statusCode, 412);
  t.equal((await ok(w.member.call('GET', `/api/pm/comments/${c.id}/history`))).total, 2, 'a refused edit leaves no revision');
});

t.test('who may comment and edit: project roles, the author only', async (t) => {
  const c = await comment(w.member, 'mine');
  const byOwner = await w.owner.call('PATCH', `/api/pm/comments/${c.id}`, { body: 'hijacked' });
  t.equal(byOwner.statusCode, 403, 'another member reads it but may not edit it');
  t.equal(byOwner.json().code, 'FORBIDDEN');
  t.equal((await w.outsider.call('PATCH', `/api/pm/comments/${c.id}`, { body: 'hijacked' })).statusCode, 404, 'a non-member does not know it');
  const byViewer = await w.viewer.call('POST', '/api/pm/comments', { taskId: task.id, body: 'I only look' });
  t.equal(byViewer.statusCode, 403, 'a viewer cannot comment');
  const byOutsider = await w.outsider.call('POST', '/api/pm/comments', { taskId: task.id, body: 'hello?' });
  t.equal(byOutsider.statusCode, 400, "a non-member's task reference is unknown");
  t.equal(byOutsider.json().code, 'VALIDATION_FAILED');
  t.equal((await w.outsider.call('GET', `/api/pm/comments/${c.id}`)).statusCode, 404);
  t.equal((await w.outsider.call('GET', `/api/pm/comments/${c.id}/history`)).statusCode, 404);
  t.equal((await ok(w.outsider.call('GET', `/api/pm/comments?taskId=${task.id}`))).total, 0);
  t.equal((await ok(w.viewer.call('GET', `/api/pm/comments/${c.id}`))).body, 'mine', 'a viewer reads');
  t.equal((await w.owner.call('GET', `/api/pm/comments/${c.id}/history`)).statusCode, 200);
});

t.test('a delete leaves a tombstone: text gone (kept in the history), place kept, no more edits', async (t) => {
  const own = await ok(w.admin('POST', '/api/pm/tasks', { projectId: w.projectId, title: 'thread' }));
  const post = (body: string) => ok(w.member.call('POST', '/api/pm/comments', { taskId: own.id, body }));
  const [a, b, c] = [await post('a'), await post(`b @${handle(w.owner)}`), await post('c')];
  t.equal((await w.owner.call('DELETE', `/api/pm/comments/${b.id}`)).statusCode, 403, 'not the author');
  t.equal((await w.outsider.call('DELETE', `/api/pm/comments/${b.id}`)).statusCode, 404);
  const stale = await w.member.call('DELETE', `/api/pm/comments/${b.id}`, undefined, { 'if-match': '"7"' });
  t.equal(stale.statusCode, 412);
  t.equal(stale.json().code, 'PRECONDITION_FAILED');
  const gone = await w.member.call('DELETE', `/api/pm/comments/${b.id}`, undefined, { 'if-match': `"${b.version}"` });
  t.equal(gone.statusCode, 204);
  t.equal(gone.body, '');
  const tomb = await ok(w.viewer.call('GET', `/api/pm/comments/${b.id}`));
  t.match(tomb, { id: b.id, body: '', mentions: [], authorId: w.member.id, version: b.version + 1 });
  t.ok(tomb.deletedAt, 'deletedAt set');
  const thread = await ok(w.viewer.call('GET', `/api/pm/comments?taskId=${own.id}`));
  t.same(
    thread.items.map((x: any) => [x.id, x.body]),
    [
      [a.id, 'a'],
      [b.id, ''],
      [c.id, 'c'],
    ],
    'the thread keeps its order',
  );
  const history = await ok(w.viewer.call('GET', `/api/pm/comments/${b.id}/history`));
  t.match(history.items, [{ body: `b @${handle(w.owner)}`, editedById: w.member.id, editedAt: tomb.deletedAt }], 'the deleted text is history');
  for (const [method, payload] of [
    ['PATCH', { body: 'back' }],
    ['PUT', { taskId: own.id, body: 'back' }],
    ['DELETE', undefined],
  ] as const) {
    const res = await w.member.call(method, `/api/pm/comments/${b.id}`, payload);
    t.equal(res.statusCode, 409, `${method} of a tombstone`);
    t.equal(res.json().code, 'CONFLICT');
  }
});

t.test('bad input: wrong types, unknown fields, too long, not an id', async (t) => {
  const bad = async (payload: unknown, why: string) => {
    const res = await w.member.call('POST', '/api/pm/comments', payload);
    t.equal(res.statusCode, 400, why);
    t.equal(res.json().code, 'VALIDATION_FAILED', why);
  };
  await bad({ taskId: task.id, body: 5 }, 'a number for a text');
  await bad({ taskId: 'nope', body: 'x' }, 'no uuid');
  await bad({ taskId: task.id, body: 'x', colour: 'red' }, 'an unknown field');
  await bad({ taskId: task.id, body: 'x'.repeat(20_001) }, 'longer than maxLength');
  await bad({ taskId: task.id, body: '' }, 'empty');
  await bad({ taskId: task.id }, 'no body');
  const c = await comment();
  t.equal((await w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: 'x'.repeat(20_001) })).statusCode, 400);
  t.equal((await w.member.call('PATCH', `/api/pm/comments/${c.id}`, { deletedAt: new Date().toISOString() })).statusCode, 400, 'deletedAt is read-only');
  t.equal((await w.member.call('GET', `/api/pm/comments/${c.id}/history?size=0`)).statusCode, 400);
  t.equal((await w.member.call('GET', `/api/pm/comments/${c.id}/history?bogus=1`)).statusCode, 400);
  t.equal((await w.member.call('GET', '/api/pm/comments/nope/history')).statusCode, 400);
  t.equal((await w.member.call('DELETE', '/api/pm/comments/nope')).statusCode, 400);
  t.equal((await w.member.call('GET', `/api/pm/comments/${task.id}/history`)).statusCode, 404, 'no such comment');
});

t.test('another tenant does not know the comments', async (t) => {
  const c = await comment();
  const other = await w.ctx.tenant();
  const as = caller(w.ctx, other.adminToken);
  t.equal((await as('GET', `/api/pm/comments/${c.id}`)).statusCode, 404);
  t.equal((await as('GET', `/api/pm/comments/${c.id}/history`)).statusCode, 404);
  t.equal((await as('PATCH', `/api/pm/comments/${c.id}`, { body: 'x' })).statusCode, 404);
  t.equal((await as('DELETE', `/api/pm/comments/${c.id}`)).statusCode, 404);
  t.equal((await ok(w.member.call('GET', `/api/pm/comments/${c.id}`))).body, 'First!');
});

t.test('OpenAPI documents the custom routes and the codes they raise', async (t) => {
  const doc = (await w.ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const del = doc.paths['/api/pm/comments/{id}'].delete;
  t.equal(del.operationId, 'pmDeleteComment');
  t.ok(
    ['204', '404', '403', '409', '412'].every((s) => s in del.responses),
    'a tombstone delete: gone, forbidden, deleted already, stale If-Match',
  );
  const history = doc.paths['/api/pm/comments/{id}/history'].get;
  t.equal(history.operationId, 'pmListCommentRevisions');
  t.ok('404' in history.responses);
  t.notOk('412' in history.responses, 'only the handler that declares it');
  t.ok(doc.paths['/api/pm/comments/{id}'].patch, 'edits are the generated PATCH and PUT');
});
