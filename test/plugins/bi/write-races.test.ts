// Many writes on one sheet at once: widget creates, PATCHes of one widget and
// layout saves all answer as they would one by one (no 503 for a deadlock
// between the sheet's locks), and the grid they leave is sound; so do sheet
// orders and PATCHes of the sheets of one application.
import t from 'tap';
import { build, onPglite } from '../../helper.ts';
import { biApi, expectStatus } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const text = { kind: 'text', text: 'x' };
// PGlite runs one statement at a time: nothing interleaves there, fewer writes check the outcome
const HALF = onPglite ? 5 : 20;

type Box = { id: string; x: number; y: number; w: number; h: number };
const overlaps = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const statusesOf = (answers: { statusCode: number }[]) => [...new Set(answers.map((r) => r.statusCode))].sort();

t.test('widget creates and PATCHes of one widget on one sheet, all at once: every one succeeds', async (t) => {
  const team = await bi.team();
  const s = await bi.sheet(team.owner, team.app.id);
  const first = await bi.widget(team.owner, s.id, { ...text, w: 12, h: 2 });
  const answers = await Promise.all(
    Array.from({ length: HALF * 2 }, (_, n) =>
      n % 2
        ? team.editor.api('PATCH', `/api/bi/sheets/${s.id}/widgets/${first.id}`, { title: `T${n}` })
        : team.owner.api('POST', `/api/bi/sheets/${s.id}/widgets`, { ...text, title: `N${n}`, w: 6, h: 2 }),
    ),
  );
  t.same(statusesOf(answers.filter((_, n) => n % 2 === 0)), [201], 'every create: 201');
  t.same(statusesOf(answers.filter((_, n) => n % 2 === 1)), [200], 'every PATCH: 200');
  const list = expectStatus(await team.owner.api('GET', `/api/bi/sheets/${s.id}/widgets?size=100`), 200, 'widgets');
  t.equal(list.total, HALF + 1);
  const boxes = list.items as Box[];
  t.notOk(
    boxes.some((a, i) => boxes.slice(i + 1).some((b) => overlaps(a, b))),
    'no two widgets overlap',
  );
  t.equal(boxes.find((b) => b.id === first.id)!.y, 0);
  const stored = expectStatus(await team.owner.api('GET', `/api/bi/sheets/${s.id}/widgets/${first.id}`), 200, 'first');
  t.equal(stored.version, HALF + 1, 'every PATCH counted once');
});

t.test('layout saves and PATCHes of the same widgets, all at once: every one succeeds', async (t) => {
  const team = await bi.team();
  const s = await bi.sheet(team.owner, team.app.id);
  const a = await bi.widget(team.owner, s.id, { ...text, w: 6, h: 2 });
  const b = await bi.widget(team.owner, s.id, { ...text, w: 6, h: 2 });
  const sideBySide = { [a.id]: { x: 0, y: 0, w: 6, h: 2 }, [b.id]: { x: 6, y: 0, w: 6, h: 2 } };
  const stacked = { [a.id]: { x: 0, y: 0, w: 6, h: 2 }, [b.id]: { x: 0, y: 2, w: 6, h: 2 } };
  const answers = await Promise.all(
    Array.from({ length: HALF * 2 }, (_, n) =>
      n % 2
        ? team.editor.api('PATCH', `/api/bi/sheets/${s.id}/widgets/${n % 4 === 1 ? a.id : b.id}`, { title: `T${n}` })
        : team.owner.api('PUT', `/api/bi/sheets/${s.id}/layout`, { widgets: n % 4 ? stacked : sideBySide }),
    ),
  );
  t.same(statusesOf(answers), [200], 'every save and PATCH: 200');
  const list = expectStatus(await team.owner.api('GET', `/api/bi/sheets/${s.id}/widgets`), 200, 'widgets');
  const [x, y] = list.items as Box[];
  t.notOk(overlaps(x, y), 'the widgets do not overlap');
});

t.test('sheet orders and PATCHes of the same sheets, all at once: every one succeeds', async (t) => {
  const team = await bi.team();
  const [a, b, c] = [await bi.sheet(team.owner, team.app.id), await bi.sheet(team.owner, team.app.id), await bi.sheet(team.owner, team.app.id)];
  const orders = [
    [a.id, b.id, c.id],
    [c.id, b.id, a.id],
  ];
  const answers = await Promise.all(
    Array.from({ length: HALF * 2 }, (_, n) =>
      n % 2
        ? team.editor.api('PATCH', `/api/bi/apps/${team.app.id}/sheets/${[a, b, c][n % 3].id}`, { description: `D${n}` })
        : team.owner.api('PUT', `/api/bi/apps/${team.app.id}/sheet-order`, { sheetIds: orders[n % 4 ? 1 : 0] }),
    ),
  );
  t.same(statusesOf(answers), [200], 'every order and PATCH: 200');
});
