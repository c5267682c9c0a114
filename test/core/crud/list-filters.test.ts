// List filter operators (`field[op]=value`) on every field type, their bad
// values, and cursor paging against page-based paging, on a probe entity whose
// every field is filterable and most sortable.
import t, { type Test } from 'tap';
import { build } from '../../helper.ts';
import { manifestsWith } from '../../support/manifests.ts';

const manifestsDir = manifestsWith(t, {
  'probe.json': {
    id: 'probe',
    name: 'Probe',
    version: '1.0.0',
    dependsOn: ['catalog'],
    permissions: [{ code: 'probe:gadgets:manage', description: 'gadgets', grants: [{ action: ['read', 'create', 'update', 'delete'], subject: 'Gadget' }] }],
    entities: [
      {
        name: 'Gadget',
        scope: 'company',
        fields: {
          code: { type: 'string', required: true, maxLength: 20, filter: true, sort: true },
          title: { type: 'string', maxLength: 50, translatable: true, filter: true, sort: true },
          note: { type: 'text', filter: true },
          qty: { type: 'integer', filter: true, sort: true },
          price: { type: 'decimal', precision: 8, scale: 2, filter: true, sort: true },
          made: { type: 'date', filter: true, sort: true },
          seen: { type: 'datetime', filter: true, sort: true },
          kind: { type: 'enum', values: ['a', 'b', 'c'], filter: true },
          categoryId: { type: 'ref', entity: 'Category', filter: true },
          active: { type: 'boolean', required: true, default: true, filter: true },
        },
      },
    ],
    routes: [{ entity: 'Gadget', path: '/api/gadgets' }],
  },
});

const ctx = await build(t, { config: { manifestsDir } });
const tenant = await ctx.tenant();
const api = (method: 'GET' | 'POST', url: string, payload?: object, headers: Record<string, string> = {}) => ctx.as(tenant.adminToken, { method, url, payload, headers });
const cat = (await api('POST', '/api/categories', { name: 'Tools' })).json().id as string;

const rows = [
  { code: 'G1', title: 'Hammer', note: '100% steel', qty: 1, price: '1.50', made: '2024-01-01', seen: '2024-01-01T10:00:00.000Z', kind: 'a', categoryId: cat },
  { code: 'G2', translations: { title: { en: 'Saw', de: 'Säge' } }, note: 'a_b', qty: 2, price: '2.00', made: '2024-02-01', seen: '2024-02-01T10:00:00.000Z', kind: 'b', active: false },
  { code: 'G3', title: 'sawdust', note: 'back\\slash', qty: 2, price: '10.00', made: '2024-03-01', kind: 'c', categoryId: cat },
  { code: 'G4', qty: 3, price: '99.99', seen: '2024-04-01T10:00:00.000Z', kind: 'a' },
  { code: 'G5', title: 'Drill', qty: 2, made: '2024-05-01' },
];
for (const r of rows) {
  const res = await api('POST', '/api/gadgets', r);
  if (res.statusCode !== 201) throw new Error(res.body);
}

const codes = async (query: string, headers: Record<string, string> = {}) => {
  const res = await api('GET', `/api/gadgets?sort=code&${query}`, undefined, headers);
  if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode} ${res.body}`);
  return res.json().items.map((g: { code: string }) => g.code);
};
const refused = async (t: Test, query: string, path: string) => {
  const res = await api('GET', `/api/gadgets?${query}`);
  t.equal(res.statusCode, 400, `${query}: 400`);
  t.equal(res.json().code, 'VALIDATION_FAILED', query);
  t.ok(
    res.json().errors?.some((e: { path: string }) => e.path === path),
    `${query}: names ${path} (${res.body})`,
  );
};

t.test('numbers, decimals, dates and instants compare', async (t) => {
  t.same(await codes('qty[gt]=1'), ['G2', 'G3', 'G4', 'G5']);
  t.same(await codes('qty[gte]=3'), ['G4']);
  t.same(await codes('qty[lt]=2'), ['G1']);
  t.same(await codes('qty[lte]=2&qty[ne]=1'), ['G2', 'G3', 'G5']);
  t.same(await codes('qty[in]=1,3'), ['G1', 'G4']);
  t.same(await codes('price[gte]=2&price[lt]=99.99'), ['G2', 'G3'], 'decimals compare as numbers, not text');
  t.same(await codes('price[isNull]=true'), ['G5']);
  t.same(await codes('price[ne]=2.00'), ['G1', 'G3', 'G4', 'G5'], 'ne holds for a row without a value');
  t.same(await codes('made[gt]=2024-02-01'), ['G3', 'G5']);
  t.same(await codes('made[in]=2024-01-01,2024-05-01'), ['G1', 'G5']);
  t.same(await codes('seen[lte]=2024-02-01T11:00:00%2B01:00'), ['G1', 'G2'], 'an offset names the instant');
  t.same(await codes('seen[isNull]=false'), ['G1', 'G2', 'G4']);
  t.same(await codes('qtyFrom=2&qtyTo=2'), ['G2', 'G3', 'G5'], 'the older From/To still work');
  t.same(await codes('qty=3'), ['G4'], 'and plain equality');
});

t.test('text: contains and startsWith are case-insensitive and literal', async (t) => {
  t.same(await codes('code[startsWith]=g'), ['G1', 'G2', 'G3', 'G4', 'G5']);
  t.same(await codes('note[contains]=%25'), ['G1'], '% matches itself');
  t.same(await codes('note[contains]=_'), ['G2'], '_ matches itself');
  t.same(await codes('note[contains]=%5C'), ['G3'], '\\ matches itself');
  t.same(await codes('code[in]=G1,G3,nope'), ['G1', 'G3']);
  t.same(await codes('code[ne]=G1'), ['G2', 'G3', 'G4', 'G5']);
  t.same(await codes('note[isNull]=true'), ['G4', 'G5']);
});

t.test('a translatable field filters on the text the reader is shown', async (t) => {
  t.same(await codes('title[startsWith]=saw'), ['G2', 'G3']);
  t.same(await codes('title[startsWith]=säg'), [], 'German is not shown to an English reader');
  t.same(await codes('title[startsWith]=säg', { 'accept-language': 'de' }), ['G2']);
  t.same(await codes('title[in]=Hammer,Drill'), ['G1', 'G5']);
  t.same(await codes('title[isNull]=true'), ['G4']);
});

t.test('enums, refs and booleans', async (t) => {
  t.same(await codes('kind[in]=a,c'), ['G1', 'G3', 'G4']);
  t.same(await codes('kind[ne]=a'), ['G2', 'G3', 'G5']);
  t.same(await codes(`categoryId[in]=${cat}`), ['G1', 'G3']);
  t.same(await codes('categoryId[isNull]=true'), ['G2', 'G4', 'G5']);
  t.same(await codes('active[ne]=true'), ['G2']);
});

t.test('bad values, unknown operators and fields are a 400 naming the parameter', async (t) => {
  await refused(t, 'qty[gt]=abc', '/qty[gt]');
  await refused(t, 'qty[gt]=1.5', '/qty[gt]');
  await refused(t, 'price[gt]=1.234', '/price[gt]');
  await refused(t, 'price[gt]=1e3', '/price[gt]');
  await refused(t, 'made[lt]=2024-02-30', '/made[lt]');
  await refused(t, 'seen[gt]=yesterday', '/seen[gt]');
  await refused(t, 'kind[ne]=z', '/kind[ne]');
  await refused(t, 'categoryId[ne]=nope', '/categoryId[ne]');
  await refused(t, 'qty[in]=1,x', '/qty[in]');
  await refused(t, 'qty[in]=1,,2', '/qty[in]');
  await refused(t, 'price[in]=1.00,99999999999999999999999999999999999999999', '/price[in]');
  await refused(t, 'made[in]=2024-01-01,0000-01-01', '/made[in]');
  await refused(t, 'seen[in]=2024-01-01', '/seen[in]');
  await refused(t, 'kind[in]=a,z', '/kind[in]');
  await refused(t, 'categoryId[in]=x', '/categoryId[in]');
  await refused(t, `code[in]=${'x'.repeat(21)}`, '/code[in]');
  await refused(t, `qty[in]=${Array.from({ length: 101 }, (_, i) => i).join(',')}`, '/qty[in]');
  await refused(t, 'price[isNull]=maybe', '/price[isNull]');
  await refused(t, `code[contains]=${'x'.repeat(201)}`, '/code[contains]');
  await refused(t, 'qty[like]=1', '/qty[like]');
  await refused(t, 'qty[contains]=1', '/qty[contains]');
  await refused(t, 'kind[gt]=a', '/kind[gt]');
  await refused(t, 'code[isNull]=true', '/code[isNull]');
  await refused(t, 'active[in]=true', '/active[in]');
  await refused(t, 'createdAt[gt]=2024-01-01T00:00:00Z', '/createdAt[gt]');
  t.same(await codes(`qty[in]=${Array.from({ length: 100 }, (_, i) => i).join(',')}`), ['G1', 'G2', 'G3', 'G4', 'G5'], '100 values are fine');
});

// a cursor walk of the whole list, `size` rows at a time
async function walk(t: Test, query: string, size: number, headers: Record<string, string> = {}): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const res = await api('GET', `/api/gadgets?${query}&size=${size}${cursor ? `&cursor=${cursor}` : ''}`, undefined, headers);
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    if (cursor) t.notOk('page' in body, 'a cursor page has no page number');
    out.push(...body.items.map((g: { code: string }) => g.code));
    cursor = body.nextCursor;
    if (!cursor) return out;
  }
  throw new Error('the cursor never ended');
}

t.test('cursor pages equal page-based pages, over ties and rows without a value', async (t) => {
  // more rows tied on qty and price, so pages split inside a tie
  for (let i = 0; i < 12; i++) {
    const res = await api('POST', '/api/gadgets', { code: `T${String(i).padStart(2, '0')}`, qty: 7, price: i % 3 ? '5.00' : null, title: i % 2 ? 'same' : undefined });
    t.equal(res.statusCode, 201);
  }
  const all = async (sort: string, headers: Record<string, string> = {}) => {
    const res = await api('GET', `/api/gadgets?size=1000&sort=${sort}`, undefined, headers);
    return res.json().items.map((g: { code: string }) => g.code);
  };
  for (const sort of ['qty', '-qty', 'price', '-price', 'qty,-price', '-createdAt', 'updatedAt', 'made', '-made', 'seen', '-seen', 'title', '-title', 'code']) {
    const expected = await all(sort);
    t.equal(expected.length, 17);
    for (const size of [1, 2, 5]) t.same(await walk(t, `sort=${sort}`, size), expected, `sort=${sort} size=${size}`);
  }
  t.same(await walk(t, 'sort=title', 3, { 'accept-language': 'de' }), await all('title', { 'accept-language': 'de' }), 'translatable keys in the reader language');
  t.same(await walk(t, 'sort=qty&qty[gte]=2&kind[ne]=b', 2), await all('qty&qty[gte]=2&kind[ne]=b'), 'with filters');
  // the page envelope's nextCursor continues a page-based walk
  const first = (await api('GET', '/api/gadgets?sort=code&size=4')).json();
  t.equal(first.page, 1);
  const rest = await walk(t, `sort=code&cursor=${first.nextCursor}`, 100);
  t.same([...first.items.map((g: { code: string }) => g.code), ...rest], await all('code'));
  const last = (await api('GET', '/api/gadgets?sort=code&size=100')).json();
  t.equal(last.nextCursor, null, 'no cursor after the last row');
});

t.test('bad cursors are a 400', async (t) => {
  const next = (await api('GET', '/api/gadgets?sort=qty&size=1')).json().nextCursor as string;
  const forge = (c: object) => Buffer.from(JSON.stringify(c)).toString('base64url');
  const decoded = JSON.parse(Buffer.from(next, 'base64url').toString());
  await refused(t, `sort=qty&page=2&cursor=${next}`, '/cursor');
  await refused(t, `sort=-qty&cursor=${next}`, '/cursor');
  await refused(t, `cursor=${next}`, '/cursor');
  await refused(t, 'sort=qty&cursor=bm9wZQ', '/cursor');
  await refused(t, 'sort=qty&cursor=a.b', '/cursor');
  await refused(t, `sort=qty&cursor=${forge({ ...decoded, k: ['1'] })}`, '/cursor');
  await refused(t, `sort=qty&cursor=${forge({ ...decoded, k: [2 ** 40] })}`, '/cursor');
  await refused(t, `sort=qty&cursor=${forge({ ...decoded, id: 'x' })}`, '/cursor');
  await refused(t, `sort=qty&cursor=${forge({ ...decoded, k: [] })}`, '/cursor');
  await refused(t, `sort=price&cursor=${forge({ s: 'price', k: ['1e5'], id: decoded.id })}`, '/cursor');
  await refused(t, `sort=seen&cursor=${forge({ s: 'seen', k: ['2024-01-01'], id: decoded.id })}`, '/cursor');
  await refused(t, `sort=code&cursor=${forge({ s: 'code', k: [null], id: decoded.id })}`, '/cursor');
  await refused(t, `sort=qty&cursor=${'A'.repeat(4001)}`, '/cursor');
});
