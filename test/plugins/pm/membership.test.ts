// Project members: only owners manage them; a user is a member once; the
// last owner stays, even against concurrent demotions.
import t from 'tap';
import { build } from '../../helper.ts';
import { expectProblem, expectStatus, pmApi } from './pm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const pm = pmApi(ctx, tenant);

t.test('who manages members', async (t) => {
  const team = await pm.team();
  const url = `/api/pm/projects/${team.project.id}/members`;
  const fresh = await pm.user();
  for (const who of ['manager', 'member', 'viewer'] as const) {
    expectProblem(t, await team[who].api('POST', url, { userId: fresh.id, role: 'member' }), 403, 'FORBIDDEN', `${who} adds`);
    const list = expectStatus(await team[who].api('GET', url), 200, `${who} lists`);
    t.equal(list.total, 4);
  }
  expectProblem(t, await team.outsider.api('GET', url), 404, 'NOT_FOUND', 'outsider lists');
  const added = expectStatus(await team.owner.api('POST', url, { userId: fresh.id }), 201, 'owner adds');
  t.equal(added.role, 'member', 'default role');
  expectProblem(t, await team.owner.api('POST', url, { userId: fresh.id, role: 'viewer' }), 409, 'CONFLICT', 'twice');
  expectProblem(t, await team.owner.api('POST', url, { userId: fresh.id, role: 'boss' }), 400, 'VALIDATION_FAILED');
  expectProblem(t, await team.owner.api('POST', url, { userId: fresh.id, projectId: team.project.id }), 400, 'VALIDATION_FAILED', 'projectId from the path only');
  expectStatus(await team.owner.api('PATCH', `${url}/${added.id}`, { role: 'manager' }), 200, 'promote');
  t.equal(expectStatus(await fresh.api('GET', `/api/pm/projects/${team.project.id}`), 200, 'the new member reads').id, team.project.id);
  t.equal((await team.owner.api('DELETE', `${url}/${added.id}`)).statusCode, 204);
  expectProblem(t, await fresh.api('GET', `/api/pm/projects/${team.project.id}`), 404, 'NOT_FOUND', 'gone with the membership');
});

t.test('the last owner cannot be removed or demoted', async (t) => {
  const owner = await pm.user();
  const p = await pm.project(owner);
  const url = `/api/pm/projects/${p.id}/members`;
  const [me] = expectStatus(await owner.api('GET', url), 200, 'members').items;
  const demote = await owner.api('PATCH', `${url}/${me.id}`, { role: 'manager' });
  expectProblem(t, demote, 409, 'CONFLICT', 'demote');
  t.equal(demote.json().errors[0].path, '/role');
  expectProblem(t, await owner.api('DELETE', `${url}/${me.id}`), 409, 'CONFLICT', 'remove');
  const second = await pm.user();
  const other = await pm.member(owner, p.id, second.id, 'owner');
  // both owners step down at once: one of them must stay
  const answers = await Promise.all([owner.api('PATCH', `${url}/${me.id}`, { role: 'member' }), second.api('DELETE', `${url}/${other.id}`)]);
  t.equal(answers.filter((r) => r.statusCode === 409).length, 1, `exactly one refused: ${answers.map((r) => r.body).join(' | ')}`);
  t.equal(answers.filter((r) => r.statusCode === 200 || r.statusCode === 204).length, 1, 'the other one went through');
  const owners = expectStatus(await ctx.as(tenant.adminToken, { method: 'GET', url: `${url}?role=owner` }), 200, 'owners');
  t.equal(owners.total, 1, 'one owner left');
});

t.test('a PM user sees the user directory: names and e-mails, nothing more', async (t) => {
  const me = await pm.user();
  const other = await pm.user();
  const read = expectStatus(await me.api('GET', `/api/users/${other.id}`), 200, 'read a user');
  t.equal(read.id, other.id);
  t.type(read.name, 'string');
  t.match(read.email, /@/);
  t.equal(read.primaryCompanyId, null, 'fields beyond the directory read as null');
  expectProblem(t, await me.api('PATCH', `/api/users/${other.id}`, { name: 'x' }), 403, 'FORBIDDEN');
});
