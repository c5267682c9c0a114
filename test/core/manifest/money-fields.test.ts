// A money field declares where its currency is ("currency": a string field of
// the entity, or of the entity of the same module a ref points at), so
// analytics can keep amounts of different currencies apart; the loader
// refuses a declaration naming anything else, at its JSON pointer.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { loadManifests } from '../../../core/manifest/loader.ts';
import { ManifestError } from '../../../core/manifest/errors.ts';
import { copyManifests, editManifest, entityOf, FIXTURES, type Json } from '../../fixtures/kernels.ts';

const MINIMAL = join(FIXTURES, 'manifests', 'minimal');

/** The minimal fixture with Item holding a currency code and a line entity pointing at it, edited by `mutate`. */
function shop(t: Test, mutate: (m: Json) => void = () => {}) {
  const dir = copyManifests(t, MINIMAL);
  editManifest(dir, 'shop.json', (m) => {
    const item = entityOf(m, 'Item');
    item.fields.currency = { type: 'string', maxLength: 3 };
    item.fields.price.currency = 'currency';
    m.entities.push({ name: 'ItemLine', scope: 'company', fields: { itemId: { type: 'ref', entity: 'Item' }, net: { type: 'decimal', currency: 'itemId.currency' } } });
    mutate(m);
  });
  return dir;
}

t.test('a field of the entity, or along a ref to an entity of the module', async (t) => {
  const loaded = await loadManifests(shop(t));
  const entities = loaded.find((l) => l.manifest.id === 'shop')!.manifest.entities!;
  t.equal(entities.find((e) => e.name === 'Item')!.fields.price.currency, 'currency');
  t.equal(entities.find((e) => e.name === 'ItemLine')!.fields.net.currency, 'itemId.currency');
});

t.test('anything else is refused at the declaration', async (t) => {
  const cases: [string, (m: Json) => void, string][] = [
    ['no such field', (m) => void (entityOf(m, 'Item').fields.price.currency = 'money'), '/entities/0/fields/price/currency'],
    ['no string field', (m) => void (entityOf(m, 'Item').fields.price.currency = 'kind'), '/entities/0/fields/price/currency'],
    ['a translatable field', (m) => void (entityOf(m, 'Item').fields.price.currency = 'title'), '/entities/0/fields/price/currency'],
    ['on no number', (m) => void (entityOf(m, 'Item').fields.code.currency = 'currency'), '/entities/0/fields/code/currency'],
    ['along no ref', (m) => void (entityOf(m, 'ItemLine').fields.net.currency = 'net.currency'), '/entities/1/fields/net/currency'],
    ['along a ref out of the module', (m) => void (entityOf(m, 'Item').fields.price.currency = 'thingId.name'), '/entities/0/fields/price/currency'],
    ['deeper than one ref', (m) => void (entityOf(m, 'ItemLine').fields.net.currency = 'itemId.thingId.name'), '/entities/1/fields/net/currency'],
  ];
  for (const [name, mutate, pointer] of cases) {
    const err = await loadManifests(shop(t, mutate)).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof ManifestError, `${name}: refused`);
    t.equal((err as ManifestError).code, 'MANIFEST_INVALID', name);
    t.equal((err as ManifestError).pointer, pointer, `${name}: at ${pointer}`);
  }
});
