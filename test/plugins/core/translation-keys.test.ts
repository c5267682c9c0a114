// A tenant's Translation row names a text the interface shows: a namespace (a
// module's id, or "console") and one of its keys. A row for a key no namespace
// declares would be stored and never shown, so every write path refuses it
// with a 400 naming the key: POST, PUT, PATCH and the bulk route.
import t, { type TAP } from 'tap';
import { build } from '../../helper.ts';
import { apiAs, expectProblem, expectStatus } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);

const refusedNaming = (t: Pick<TAP, 'equal' | 'match' | 'same' | 'ok'>, res: Awaited<ReturnType<typeof api>>, path: string, named: string, what: string) => {
  expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
  const body = res.json();
  t.same(
    body.errors.map((e: { path: string }) => e.path),
    [path],
    `${what}: the field at fault`,
  );
  t.ok(body.detail.includes(named) && body.errors[0].message.includes(named), `${what}: names ${named}`);
};

t.test('a row for a key no namespace declares is refused on every write', async (t) => {
  const unknownKey = { language: 'de', namespace: 'core', key: 'dashboard.noSuchText', text: 'Nichts' };
  refusedNaming(t, await api('POST', '/api/translations', unknownKey), '/key', 'dashboard.noSuchText', 'POST, unknown key');
  refusedNaming(t, await api('POST', '/api/translations', { ...unknownKey, namespace: 'nomodule', key: 'form.save' }), '/namespace', 'nomodule', 'POST, unknown namespace');
  refusedNaming(t, await api('POST', '/api/translations', { ...unknownKey, namespace: 'console', key: 'dashboard.heading' }), '/key', 'dashboard.heading', "another namespace's key");

  const row = expectStatus(await api('POST', '/api/translations', { language: 'de', namespace: 'core', key: 'dashboard.heading', text: 'Übersicht' }), 201, 'a known key');
  expectStatus(await api('POST', '/api/translations', { language: 'de', namespace: 'console', key: 'form.save', text: 'Speichern' }), 201, 'a console key');
  expectStatus(await api('POST', '/api/translations', { language: 'de', namespace: 'core', key: 'menu.dashboard', text: 'Übersicht' }), 201, "a manifest label's key");

  const url = `/api/translations/${row.id}`;
  refusedNaming(t, await api('PATCH', url, { key: 'dashboard.gone' }), '/key', 'dashboard.gone', 'PATCH');
  refusedNaming(t, await api('PATCH', url, { namespace: 'console' }), '/key', 'dashboard.heading', 'PATCH to a namespace without the key');
  refusedNaming(t, await api('PUT', url, { language: 'de', namespace: 'core', key: 'dashboard.gone', text: 'x' }), '/key', 'dashboard.gone', 'PUT');
  expectStatus(await api('PATCH', url, { text: 'Überblick' }), 200, 'a change of the text alone');

  const bulk = await api('POST', '/api/translations/bulk', {
    create: [
      { language: 'fr', namespace: 'core', key: 'dashboard.heading', text: 'Tableau de bord' },
      { language: 'fr', namespace: 'core', key: 'dashboard.nope', text: 'Non' },
    ],
  });
  expectProblem(t, bulk, 422, 'BULK_FAILED', 'bulk');
  const [failure] = bulk.json().failures;
  t.match(failure, { op: 'create', index: 1, status: 400, problem: { code: 'VALIDATION_FAILED', errors: [{ path: '/key' }] } }, 'the row at fault');
  t.ok(failure.problem.detail.includes('dashboard.nope'), 'named');
  const stored = expectStatus(await api('GET', '/api/translations?language=fr'), 200, 'list');
  t.equal(stored.total, 0, 'nothing of the bulk written');
});
