// Task numbers (WEB-1, WEB-2, …) are a manifest "sequence": numbered per
// project on create, race-free, never reused by a concurrent create.
import t from 'tap';
import { build, onPglite } from '../../helper.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const api = (method: string, url: string, payload?: object) => ctx.as(tenant.adminToken, { method: method as 'GET', url, payload });
const project = async (key: string) => {
  const res = await api('POST', '/api/pm/projects', { key, name: key });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().id as string;
};

t.test('concurrent creates in one project get distinct numbers 1..n; each project counts on its own', async (t) => {
  const web = await project('WEB');
  const app = await project('APP');
  const n = onPglite ? 6 : 24;
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => api('POST', '/api/pm/tasks', { projectId: i % 3 === 2 ? app : web, title: `task ${i}` })));
  t.same(
    answers.map((r) => r.statusCode),
    answers.map(() => 201),
    answers.find((r) => r.statusCode !== 201)?.body ?? 'all created',
  );
  const numbers = (projectId: string) =>
    answers
      .map((r) => r.json())
      .filter((x) => x.projectId === projectId)
      .map((x) => x.number)
      .sort((a, b) => a - b);
  const inWeb = answers.filter((r) => r.json().projectId === web).length;
  t.same(
    numbers(web),
    Array.from({ length: inWeb }, (_, i) => i + 1),
  );
  t.same(
    numbers(app),
    Array.from({ length: n - inWeb }, (_, i) => i + 1),
  );
});

t.test('a number is read-only and survives deletes without reuse of a higher one', async (t) => {
  const id = await project('SEQ');
  const first = (await api('POST', '/api/pm/tasks', { projectId: id, title: 'one' })).json();
  const second = (await api('POST', '/api/pm/tasks', { projectId: id, title: 'two' })).json();
  t.equal(second.number, first.number + 1);
  const refused = await api('POST', '/api/pm/tasks', { projectId: id, title: 'three', number: 99 });
  t.equal(refused.statusCode, 400, 'a body may not set the number');
  t.equal((await api('PATCH', `/api/pm/tasks/${second.id}`, { number: 7 })).statusCode, 400);
  t.equal((await api('DELETE', `/api/pm/tasks/${first.id}`)).statusCode, 204);
  t.equal((await api('POST', '/api/pm/tasks', { projectId: id, title: 'four' })).json().number, second.number + 1);
});

t.test('another tenant numbers its own tasks from 1', async (t) => {
  const other = await ctx.tenant();
  const as = (method: string, url: string, payload?: object) => ctx.as(other.adminToken, { method: method as 'GET', url, payload });
  const p = (await as('POST', '/api/pm/projects', { key: 'WEB', name: 'Web' })).json();
  t.equal((await as('POST', '/api/pm/tasks', { projectId: p.id, title: 'first' })).json().number, 1);
});
