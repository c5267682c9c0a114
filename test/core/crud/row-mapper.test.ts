// Row ↔ DTO without a database: the models come from buildEntityModels on an
// inline manifest, rows are plain objects as MikroORM hands them over.
import t from 'tap';
import type { Manifest } from '../../../core/manifest/format.ts';
import { buildEntityModels } from '../../../core/model/entity-builder.ts';
import { rowMapper, storedValue, type ReadOptions } from '../../../core/crud/row-mapper.ts';

const manifest: Manifest = {
  id: 'shop',
  name: 'Shop',
  version: '1.0.0',
  entities: [
    {
      name: 'Item',
      scope: 'company',
      fields: {
        name: { type: 'string', translatable: true },
        blurb: { type: 'text', translatable: true },
        sku: { type: 'string' },
        price: { type: 'decimal' },
        rate: { type: 'decimal', precision: 8, scale: 4 },
        count: { type: 'decimal', precision: 6, scale: 0 },
        qty: { type: 'integer' },
        day: { type: 'date' },
        at: { type: 'datetime' },
        hash: { type: 'string', internal: true },
        apiKey: { type: 'string', secret: true },
      },
    },
    { name: 'Note', scope: 'tenant', fields: { body: { type: 'text' } } },
  ],
};
const [item, note] = buildEntityModels([manifest]);
const field = (name: string) => item.byName.get(name)!;
const toItem = rowMapper(item);
const plain: ReadOptions = { prefs: ['en'], translations: false };

const created = new Date('2024-05-01T08:00:00.000Z');
const at = new Date('2024-05-02T09:30:00.123Z');
const row = {
  id: 'a0000000-0000-7000-8000-000000000001',
  companyId: 'c0000000-0000-7000-8000-000000000001',
  name: { de: 'Haus', en: 'House', fr: 'Maison' },
  blurb: { de: 'Nur deutsch' },
  sku: 'H-1',
  price: '7.50',
  rate: '0.1250',
  count: '3',
  qty: 0,
  day: '2024-01-31',
  at,
  hash: 'scrypt$secret-hash',
  apiKey: 'v1.sealed.value.here',
  createdAt: created,
  updatedAt: created,
  version: 2,
};

t.test('translatable fields: the first preferred language held, else any held', async (t) => {
  const used = new Set<string>();
  const dto = toItem(row, { prefs: ['fr-ch', 'fr', 'en'], translations: false }, used);
  t.equal(dto.name, 'Maison');
  // blurb has no fr or en: the language it does hold rather than null
  t.equal(dto.blurb, 'Nur deutsch');
  t.same([...used].sort(), ['de', 'fr'], 'the languages actually served are reported');

  t.equal(toItem(row, { prefs: ['it', 'en'], translations: false }).name, 'House', 'falls back down the list');
  // no preferred language held: the alphabetically first, so the answer is stable
  t.equal(toItem(row, { prefs: ['it'], translations: false }).name, 'Haus');
  const empty = toItem({ ...row, name: null, blurb: {} }, plain);
  t.equal(empty.name, null);
  t.equal(empty.blurb, null);
});

t.test('the translations object', async (t) => {
  t.notOk('translations' in toItem(row, plain), 'absent unless asked for');
  t.same(toItem(row, { prefs: ['en'], translations: true }).translations, {
    name: { de: 'Haus', en: 'House', fr: 'Maison' },
    blurb: { de: 'Nur deutsch' },
  });
  // stored keys are lower case; the languages asked for match in any case
  t.same(toItem(row, { prefs: ['en'], translations: ['FR', 'en'] }).translations, {
    name: { en: 'House', fr: 'Maison' },
    blurb: {},
  });
  t.same(
    toItem({ ...row, blurb: null }, { prefs: ['en'], translations: true }).translations,
    {
      name: { de: 'Haus', en: 'House', fr: 'Maison' },
      blurb: {},
    },
    'a field never written shows an empty map, not null',
  );
  t.notOk('translations' in rowMapper(note)({ id: 'n', body: 'x' }, { prefs: ['en'], translations: true }), 'none on an entity without translatable fields');
});

t.test('internal and secret fields never leave', async (t) => {
  const dto = toItem(row, { prefs: ['en'], translations: true });
  t.same(Object.keys(dto).sort(), ['at', 'blurb', 'companyId', 'count', 'createdAt', 'day', 'id', 'name', 'price', 'qty', 'rate', 'sku', 'translations', 'updatedAt', 'version']);
  t.notMatch(JSON.stringify(dto), /scrypt|sealed/, 'neither value appears anywhere');
});

t.test('values as they leave: decimals stay strings, dates unchanged, missing ones null', async (t) => {
  const dto = toItem(row, plain);
  t.same(dto, {
    id: row.id,
    companyId: row.companyId,
    name: 'House',
    blurb: 'Nur deutsch',
    sku: 'H-1',
    price: '7.50',
    rate: '0.1250',
    count: '3',
    qty: 0,
    day: '2024-01-31',
    at,
    createdAt: created,
    updatedAt: created,
    version: 2,
  });
  t.equal(dto.price, '7.50', 'not a number: no float rounding, trailing zeros kept');
  t.equal(dto.qty, 0, 'a zero is not taken for missing');
  t.equal((dto.at as Date).toISOString(), '2024-05-02T09:30:00.123Z');
  const sparse = toItem({ id: row.id, companyId: row.companyId, name: { en: 'x' }, createdAt: created, updatedAt: created, version: 1 }, plain);
  for (const name of ['sku', 'price', 'day', 'at']) t.equal(sparse[name], null, `${name} null, not undefined`);
  t.notOk('companyId' in rowMapper(note)({ id: 'n', body: 'x' }, plain), 'no companyId on a tenant-scoped entity');
});

t.test('storedValue: decimals padded to the field scale', async (t) => {
  t.equal(storedValue(field('price'), '7'), '7.00');
  t.equal(storedValue(field('price'), '7.5'), '7.50');
  t.equal(storedValue(field('price'), '7.25'), '7.25');
  t.equal(storedValue(field('price'), '-3.1'), '-3.10');
  t.equal(storedValue(field('rate'), '1.5'), '1.5000');
  t.equal(storedValue(field('count'), '12'), '12', 'scale 0: no point');
  t.equal(storedValue(field('price'), 1.5), '1.50', 'a numeric manifest default');
  t.equal(storedValue(field('rate'), 2), '2.0000');
  t.equal(storedValue(field('price'), null), null);
});

t.test('storedValue: numeric has no negative zero', async (t) => {
  for (const v of ['-0', '-0.0', '-0.00']) t.equal(storedValue(field('price'), v), '0.00', v);
  t.equal(storedValue(field('count'), '-0'), '0');
  t.equal(storedValue(field('price'), -0), '0.00');
  t.equal(storedValue(field('price'), '-0.01'), '-0.01', 'a small negative keeps its sign');
  t.equal(storedValue(field('price'), '-10'), '-10.00', 'zeros in the whole part keep the sign');
});

// checkFieldDefault accepts a decimal default with leading zeros ("007.5"), and
// create() passes it through storedValue: the create answer must show what the
// database (and every later read) holds
t.test('storedValue: leading zeros are dropped, as numeric drops them', async (t) => {
  t.equal(storedValue(field('price'), '007.5'), '7.50');
  t.equal(storedValue(field('price'), '-007.5'), '-7.50');
  t.equal(storedValue(field('price'), '000'), '0.00');
  t.equal(storedValue(field('price'), '0.5'), '0.50');
});

t.test('storedValue: a date-time string becomes the Date of the same instant', async (t) => {
  const cases: [string, string][] = [
    ['2024-01-31T10:00:00Z', '2024-01-31T10:00:00.000Z'],
    // RFC 3339 allows lower case; MikroORM's own conversion does not
    ['2024-01-31t10:00:00z', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31t10:00:00.5z', '2024-01-31T10:00:00.500Z'],
    ['2024-01-31 10:00:00Z', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T12:00:00+02:00', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31t05:30:00-04:30', '2024-01-31T10:00:00.000Z'],
  ];
  for (const [input, instant] of cases) {
    const out = storedValue(field('at'), input);
    t.ok(out instanceof Date, `${input} is a Date`);
    t.equal((out as Date).toISOString(), instant, input);
  }
  t.equal(storedValue(field('at'), at), at, 'a Date is kept as it is');
  t.equal(storedValue(field('at'), null), null);
  t.equal(storedValue(field('day'), '2024-01-31'), '2024-01-31', 'a date (no time) stays a string');
  t.equal(storedValue(field('sku'), '7'), '7', 'other fields untouched');
});
