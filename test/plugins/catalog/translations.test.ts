// Translatable fields through /api/products: Accept-Language, Content-Language,
// ?translations, and writes that store, merge or clear languages.
import t from 'tap';
import { build } from '../../helper.ts';
import { catalogApi } from './catalog-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { api, product } = catalogApi(ctx, tenant.adminToken);

const p = await product({ sku: 'TR-1', name: undefined, translations: { name: { en: 'Screw', de: 'Schraube', fr: 'Vis' }, description: { en: 'Small', de: 'Klein' } } });
const url = `/api/products/${p.id}`;
const read = (headers: Record<string, string> = {}, query = '') => api('GET', `${url}${query}`, undefined, headers);

t.test('Accept-Language picks the best language, by quality, with fallback to en', async (t) => {
  const cases: [string | undefined, string, string, string][] = [
    [undefined, 'Screw', 'Small', 'en'],
    ['de', 'Schraube', 'Klein', 'de'],
    ['DE-at', 'Schraube', 'Klein', 'de'],
    ['fr', 'Vis', 'Small', 'fr, en'],
    ['it', 'Screw', 'Small', 'en'],
    ['it, fr;q=0.5, de;q=0.9', 'Schraube', 'Klein', 'de'],
    ['de;q=0.1, fr;q=0.2', 'Vis', 'Klein', 'fr, de'],
    ['de;q=0, fr', 'Vis', 'Small', 'fr, en'],
    ['fr;Q=0.1, de;q=0.2', 'Schraube', 'Klein', 'de'],
    ['fr;q=1.5, de;q=0.5', 'Schraube', 'Klein', 'de'],
    ['fr;q=high, it', 'Screw', 'Small', 'en'],
    ['fr ; q=0.5, it', 'Vis', 'Small', 'fr, en'],
    ['*', 'Screw', 'Small', 'en'],
    ['garbage;;;,', 'Screw', 'Small', 'en'],
  ];
  for (const [header, name, description, contentLanguage] of cases) {
    const res = await read(header === undefined ? {} : { 'accept-language': header });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { name, description }, `Accept-Language: ${header}`);
    t.same(res.headers['content-language']?.toString().split(', ').sort(), contentLanguage.split(', ').sort(), `Content-Language for ${header}`);
  }
});

t.test('?translations=true adds every language, a list only those', async (t) => {
  const all = (await read({}, '?translations=true')).json();
  t.same(all.translations, { name: { en: 'Screw', de: 'Schraube', fr: 'Vis' }, description: { en: 'Small', de: 'Klein' } });
  t.equal(all.name, 'Screw', 'the field stays a string');
  const some = (await read({}, '?translations=de,fr')).json();
  t.same(some.translations, { name: { de: 'Schraube', fr: 'Vis' }, description: { de: 'Klein' } });
  const upper = (await read({}, '?translations=DE')).json();
  t.same(upper.translations, { name: { de: 'Schraube' }, description: { de: 'Klein' } });
  t.notOk('translations' in (await read({}, '?translations=false')).json());
  const listed = (await api('GET', '/api/products?search=TR-1&translations=fr')).json();
  t.same(listed.items[0].translations, { name: { fr: 'Vis' }, description: {} });
  for (const q of ['?translations=yes please', '?translations=de,', '?translations=', '?colour=red']) {
    const res = await read({}, q.replace(' ', '%20'));
    t.equal(res.statusCode, 400, q);
    t.equal(res.json().code, 'VALIDATION_FAILED');
  }
});

t.test('a plain string is stored under Content-Language', async (t) => {
  const created = await api('POST', '/api/products', { sku: 'TR-2', name: 'Mutter', price: '1.00' }, { 'content-language': 'de' });
  t.equal(created.statusCode, 201);
  const id = created.json().id;
  const res = await api('GET', `/api/products/${id}?translations=true`);
  t.same(res.json().translations.name, { de: 'Mutter' });
  t.equal(res.json().name, 'Mutter', 'no English: any language held');
  t.equal(res.headers['content-language'], 'de');
  const patched = await api('PATCH', `/api/products/${id}?translations=true`, { name: 'Nut' }, { 'content-language': 'en-GB' });
  t.equal(patched.statusCode, 200);
  t.same(patched.json().translations.name, { de: 'Mutter', 'en-gb': 'Nut' });
  const invalid = await api('PATCH', `/api/products/${id}?translations=true`, { name: 'Nut' }, { 'content-language': '???' });
  t.same(invalid.json().translations.name, { de: 'Mutter', 'en-gb': 'Nut', en: 'Nut' }, 'an unusable Content-Language means the default');
});

t.test('PATCH of one language keeps the others; a translations object merges', async (t) => {
  const patched = await api('PATCH', `${url}?translations=true`, { name: 'Schräubchen' }, { 'content-language': 'de' });
  t.equal(patched.statusCode, 200, patched.body);
  t.same(patched.json().translations.name, { en: 'Screw', de: 'Schräubchen', fr: 'Vis' });
  t.same(patched.json().translations.description, { en: 'Small', de: 'Klein' });
  const merged = await api('PATCH', `${url}?translations=true`, { translations: { name: { it: 'Vite', FR: 'Vis à bois' } } });
  t.same(merged.json().translations.name, { en: 'Screw', de: 'Schräubchen', fr: 'Vis à bois', it: 'Vite' });
  const both = await api('PATCH', `${url}?translations=true`, { description: 'Tiny', translations: { description: { fr: 'Petit' } } });
  t.same(both.json().translations.description, { en: 'Tiny', de: 'Klein', fr: 'Petit' });
  const same = await api('PATCH', url, { description: 'Tiny', translations: { name: { it: 'Vite' } } });
  t.equal(same.headers.etag, both.headers.etag, 'rewriting the stored text changes nothing');
});

t.test('null empties a translatable field in every language, on PATCH too', async (t) => {
  const other = await product({ translations: { description: { en: 'Long', de: 'Lang' } } });
  const res = await api('PATCH', `/api/products/${other.id}?translations=true`, { description: null });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().description, null);
  t.same(res.json().translations.description, {});
});

t.test('a language given null in a translations object loses its text; the last one of a required field cannot', async (t) => {
  const other = await product({ name: undefined, translations: { name: { en: 'Nut', de: 'Mutter', fr: 'Écrou' } } });
  const res = await api('PATCH', `/api/products/${other.id}?translations=true`, { translations: { name: { de: null, FR: null, it: 'Dado', es: null } } });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json().translations.name, { en: 'Nut', it: 'Dado' }, 'German and French gone (any case), Spanish was never there');
  const last = await api('PATCH', `/api/products/${other.id}`, { translations: { name: { en: null, it: null } } });
  t.equal(last.statusCode, 400);
  t.match(last.json().errors, [{ path: '/name', message: 'is required in at least one language' }]);
  const created = await product({ name: undefined, translations: { name: { en: 'Washer', de: null } } });
  t.same((await api('GET', `/api/products/${created.id}?translations=true`)).json().translations.name, { en: 'Washer' }, 'null on create is no text');
});

t.test('PUT with a translations object replaces the languages', async (t) => {
  const current = (await read()).json();
  const res = await api(
    'PUT',
    `${url}?translations=true`,
    {
      sku: 'TR-1',
      name: null,
      description: null,
      price: '1.00',
      currency: 'EUR',
      unit: 'piece',
      stock: 0,
      categoryId: null,
      isActive: true,
      availableFrom: null,
      discontinuedAt: null,
      attributes: null,
      translations: { name: { en: 'Bolt' } },
    },
    { 'if-match': `"${current.version}"` },
  );
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json().translations, { name: { en: 'Bolt' }, description: {} });
  t.equal(res.json().description, null);
});

t.test('a write leaving no name in any language is 400', async (t) => {
  const res = await api('PATCH', url, { name: null });
  t.equal(res.statusCode, 400);
  t.equal(res.json().code, 'VALIDATION_FAILED');
  const empty = await api('PUT', url, {
    sku: 'TR-1',
    name: null,
    description: null,
    price: '1.00',
    currency: 'EUR',
    unit: 'piece',
    stock: 0,
    categoryId: null,
    isActive: true,
    availableFrom: null,
    discontinuedAt: null,
    attributes: null,
  });
  t.equal(empty.statusCode, 400);
  t.equal(empty.json().code, 'VALIDATION_FAILED');
});
