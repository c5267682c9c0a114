// GET /api/products: the paging envelope, sort, filters, search and bad query
// parameters. The rows asserted on carry SKUs starting "L-" or "SRCH-".
import t from 'tap';
import { build } from '../../helper.ts';
import { catalogApi, expectStatus, UNKNOWN_ID } from './catalog-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { api, product, category } = catalogApi(ctx, tenant.adminToken);

const tools = (await category({ name: 'List tools' })).id;
const garden = (await category({ name: 'List garden' })).id;
// names sort the same under every collation: one case, letters only
const rows = [
  { sku: 'L-1', name: 'delta', price: '5.00', unit: 'kg', stock: 3, categoryId: tools, availableFrom: '2024-01-01' },
  { sku: 'L-2', name: 'alpha', price: '15.00', stock: 1, categoryId: tools, isActive: false, availableFrom: '2024-06-01' },
  { sku: 'L-3', name: 'charlie', price: '25.50', unit: 'litre', stock: 2, categoryId: garden, translations: { name: { de: 'zulu' } } },
  { sku: 'L-4', name: 'bravo', price: '10.00', unit: 'kg', stock: 4, availableFrom: '2025-01-01' },
];
const ids: Record<string, string> = {};
for (const r of rows) ids[r.sku] = (await product(r)).id;
const list = async (query: string, headers: Record<string, string> = {}) => {
  const res = await api('GET', `/api/products?${query}`, undefined, headers);
  expectStatus(res, 200, query);
  return res;
};
const skus = async (query: string, headers: Record<string, string> = {}) => (await list(`search=L-&${query}`, headers)).json().items.map((p: { sku: string }) => p.sku);

t.test('the paging envelope with defaults', async (t) => {
  const res = await list('');
  const body = res.json();
  t.same(Object.keys(body).sort(), ['items', 'nextCursor', 'page', 'size', 'total']);
  t.equal(body.page, 1);
  t.equal(body.size, 50);
  t.ok(body.total >= 4);
  t.equal(body.items.length, Math.min(body.total, 50));
  t.equal(res.headers['content-language'], 'en');
});

t.test('page and size', async (t) => {
  const first = (await list('search=L-&size=3&sort=sku')).json();
  t.match(first, { page: 1, size: 3, total: 4 });
  t.same(
    first.items.map((p: { sku: string }) => p.sku),
    ['L-1', 'L-2', 'L-3'],
  );
  const second = (await list('search=L-&size=3&page=2&sort=sku')).json();
  t.match(second, { page: 2, size: 3, total: 4 });
  t.same(
    second.items.map((p: { sku: string }) => p.sku),
    ['L-4'],
  );
  const beyond = (await list('search=L-&size=3&page=9')).json();
  t.match(beyond, { page: 9, size: 3, total: 4, items: [] });
  t.equal((await list('size=1000')).json().size, 1000);
});

for (const q of ['size=1001', 'size=0', 'size=-1', 'size=abc', 'size=1.5', 'size=', 'page=0', 'page=-1', 'page=abc', 'page=1000001']) {
  t.test(`400 on ${q}`, async (t) => {
    const res = await api('GET', `/api/products?${q}`);
    t.equal(res.statusCode, 400, res.body);
    t.equal(res.json().code, 'VALIDATION_FAILED');
  });
}

t.test('integers in other notations are malformed', async (t) => {
  for (const q of ['size=0x10', 'size=%205', 'size=1e1', 'page=0b1']) {
    const res = await api('GET', `/api/products?${q}`);
    t.equal(res.statusCode, 400, q);
    t.equal(res.json().code, 'VALIDATION_FAILED', q);
  }
});

t.test('sort by allowed fields, ascending and descending', async (t) => {
  t.same(await skus('sort=price'), ['L-1', 'L-4', 'L-2', 'L-3']);
  t.same(await skus('sort=-price'), ['L-3', 'L-2', 'L-4', 'L-1']);
  t.same(await skus('sort=stock'), ['L-2', 'L-3', 'L-1', 'L-4']);
  t.same(await skus('sort=-sku'), ['L-4', 'L-3', 'L-2', 'L-1']);
  t.same(await skus('sort=createdAt'), ['L-1', 'L-2', 'L-3', 'L-4']);
  // rows made within one millisecond tie on the timestamp: check the order, not the rows
  for (const q of ['sort=-createdAt', 'sort=-updatedAt,sku']) {
    const stamps = (await list(`search=L-&${q}`)).json().items.map((p: { createdAt: string; updatedAt: string }) => Date.parse(q.includes('updated') ? p.updatedAt : p.createdAt));
    t.same(
      stamps,
      [...stamps].sort((a, b) => b - a),
      q,
    );
  }
  t.same(await skus('sort=-availableFrom,sku'), ['L-3', 'L-4', 'L-2', 'L-1'], 'nulls first when descending (PostgreSQL default)');
});

t.test('the default sort: newest first, ties by id', async (t) => {
  // manifests/catalog.json: "-createdAt", served by the index (company_id, created_at desc, id)
  const items = (await list('search=L-')).json().items as { sku: string; id: string; createdAt: string }[];
  const expected = [...items].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? -1 : 1));
  t.same(
    items.map((p) => p.sku),
    expected.map((p) => p.sku),
  );
  t.equal(items.length, 4);
  t.same(await skus(''), await skus('sort=-createdAt'), 'as sort=-createdAt');
});

t.test('sort by the translatable name follows the response language', async (t) => {
  t.same(await skus('sort=name'), ['L-2', 'L-4', 'L-3', 'L-1']);
  t.same(await skus('sort=-name'), ['L-1', 'L-3', 'L-4', 'L-2']);
  // in German L-3 reads "zulu"; the others fall back to English and sort by it
  t.same(await skus('sort=name', { 'accept-language': 'de' }), ['L-2', 'L-4', 'L-1', 'L-3']);
  t.same(await skus('sort=-name', { 'accept-language': 'de' }), ['L-3', 'L-1', 'L-4', 'L-2']);
  const mixed = await list('search=L-', { 'accept-language': 'de' });
  t.same(String(mixed.headers['content-language']).split(', ').sort(), ['de', 'en'], 'every language the page shows');
  t.same(
    mixed
      .json()
      .items.map((p: { name: string }) => p.name)
      .sort(),
    ['alpha', 'bravo', 'delta', 'zulu'],
  );
});

for (const q of ['sort=colour', 'sort=unit', 'sort=attributes', 'sort=companyId', 'sort=name,', 'sort=', 'sort=--name', 'sort=na%20me']) {
  t.test(`400 on ${q}`, async (t) => {
    const res = await api('GET', `/api/products?${q}`);
    t.equal(res.statusCode, 400, res.body);
    t.equal(res.json().code, 'VALIDATION_FAILED');
  });
}

t.test('filters', async (t) => {
  t.same(await skus(`categoryId=${tools}&sort=sku`), ['L-1', 'L-2']);
  t.same(await skus(`categoryId=${garden}`), ['L-3']);
  t.same(await skus(`categoryId=${UNKNOWN_ID}`), []);
  t.same(await skus('isActive=false'), ['L-2']);
  t.same(await skus('isActive=true&sort=sku'), ['L-1', 'L-3', 'L-4']);
  t.same(await skus('priceFrom=10.00&sort=price'), ['L-4', 'L-2', 'L-3']);
  t.same(await skus('priceTo=10&sort=price'), ['L-1', 'L-4']);
  t.same(await skus('priceFrom=10&priceTo=20&sort=price'), ['L-4', 'L-2']);
  t.same(await skus('priceFrom=9.5&priceTo=9.99'), []);
  t.same(await skus('price=25.5'), ['L-3']);
  t.same(await skus('unit=kg&sort=sku'), ['L-1', 'L-4']);
  t.same(await skus('unit=hour'), []);
  t.same(await skus('availableFrom=2024-06-01'), ['L-2']);
  t.same(await skus('availableFromFrom=2024-03-01&sort=sku'), ['L-2', 'L-4']);
  t.same(await skus('availableFromTo=2024-12-31&sort=sku'), ['L-1', 'L-2']);
  t.same(await skus(`unit=kg&categoryId=${tools}&isActive=true`), ['L-1'], 'filters combine with AND');
  const filtered = (await list(`search=L-&categoryId=${tools}&size=1`)).json();
  t.equal(filtered.total, 2, 'total counts the filtered rows, not the page');
});

for (const q of [
  'isActive=yes',
  'isActive=',
  'priceFrom=abc',
  'priceTo=1.005',
  'unit=ton',
  'categoryId=abc',
  'availableFrom=2024-13-01',
  'availableFromFrom=tomorrow',
  'stock=1',
  'sku=L-1',
  'currency=EUR',
  'search=' + 'x'.repeat(201),
]) {
  t.test(`400 on ${q.slice(0, 40)}`, async (t) => {
    const res = await api('GET', `/api/products?${q}`);
    t.equal(res.statusCode, 400, res.body);
    t.equal(res.json().code, 'VALIDATION_FAILED');
  });
}

t.test('a NUL character in search is 400, not a database error', async (t) => {
  for (const q of ['search=%00', 'search=a%00b']) {
    const res = await api('GET', `/api/products?${q}`);
    t.equal(res.statusCode, 400, q);
    t.equal(res.json().code, 'VALIDATION_FAILED');
  }
});

t.test('unknown and repeated query parameters are 400', async (t) => {
  for (const q of [
    'colour=red',
    'limit=10',
    'offset=5',
    'page=1&page=2',
    'size=10&size=10',
    'sort=sku&sort=price',
    'search=a&search=b',
    'isActive=true&isActive=false',
    `categoryId=${tools}&categoryId=${garden}`,
    'translations=true&translations=de',
  ]) {
    const res = await api('GET', `/api/products?${q}`);
    t.equal(res.statusCode, 400, `${q}: ${res.body}`);
    t.equal(res.json().code, 'VALIDATION_FAILED', q);
  }
});

t.test('search: case-insensitive substring over sku, name in every language, description', async (t) => {
  await product({ sku: 'SRCH-1', name: 'Claw Hammer', description: 'Forged STEEL head' });
  await product({ sku: 'SRCH-2', name: undefined, translations: { name: { en: 'Saw', de: 'Säge' } } });
  await product({ sku: 'SRCH-3', name: '100% cotton', description: 'under_score' });
  await product({ sku: 'SRCH-4', name: '100 percent wool', description: 'underscore\\backslash' });
  const search = async (term: string) => {
    const res = await list(`search=${encodeURIComponent(term)}&sort=sku`);
    return res
      .json()
      .items.map((p: { sku: string }) => p.sku)
      .filter((s: string) => s.startsWith('SRCH-'));
  };
  t.same(await search('hAmMeR'), ['SRCH-1'], 'name, any case');
  t.same(await search('steel'), ['SRCH-1'], 'description');
  t.same(await search('srch-2'), ['SRCH-2'], 'sku');
  t.same(await search('SÄGE'), ['SRCH-2'], 'a language that is not the response language');
  t.same(await search('%'), ['SRCH-3'], '% is literal');
  t.same(await search('100%'), ['SRCH-3']);
  t.same(await search('_'), ['SRCH-3'], '_ is literal');
  t.same(await search('o_t'), [], '_ matches no single character ("cotton")');
  t.same(await search('\\'), ['SRCH-4'], 'backslash is literal');
  t.same(await search("'); drop table x; --"), [], 'quotes are data');
  const all = (await list('search=SRCH')).json();
  t.equal(all.total, 4);
});

t.test('items hold no internal fields and the page is typed', async (t) => {
  const item = (await list('search=L-1')).json().items[0];
  t.same(
    Object.keys(item).sort(),
    [
      'attributes',
      'availableFrom',
      'categoryId',
      'companyId',
      'createdAt',
      'currency',
      'description',
      'discontinuedAt',
      'id',
      'isActive',
      'name',
      'price',
      'sku',
      'stock',
      'unit',
      'updatedAt',
      'version',
    ].sort(),
  );
  t.equal(item.id, ids['L-1']);
  t.equal(item.price, '5.00');
});
