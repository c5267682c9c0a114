// The index that serves an entity's default list (core/model/list-plan.ts): which
// entities get one and its columns, then on a real tenant schema of the shipped
// modules: declared as planned, and a second diff finds nothing to change.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import type { Manifest } from '../../../core/manifest/format.ts';
import { buildEntityModels } from '../../../core/model/entity-builder.ts';
import { defaultSortIndex, isListed, sortKeys } from '../../../core/model/list-plan.ts';
import { migrateSchema, pendingStatements } from '../../../core/db/migrator.ts';
import { kernelKit } from '../../fixtures/kernels.ts';

const field = (extra: Record<string, unknown> = {}) => ({ type: 'string', sort: true, ...extra });
const manifest = {
  id: 'plan',
  name: 'Plan',
  version: '1.0.0',
  entities: [
    { name: 'Newest', scope: 'company', fields: { label: field() } },
    { name: 'ByLabel', scope: 'company', fields: { label: field(), day: { type: 'date', sort: true } }, defaultSort: 'label,-day' },
    { name: 'Translated', scope: 'company', fields: { title: field({ translatable: true }) }, defaultSort: 'title' },
    { name: 'UniqueCode', scope: 'company', fields: { code: field({ unique: true }) }, defaultSort: '-code' },
    { name: 'UniqueMixed', scope: 'tenant', fields: { a: field(), b: field() }, unique: [['a', 'b']], defaultSort: 'a,-b' },
    { name: 'Unlisted', scope: 'tenant', fields: { label: field() } },
    { name: 'ReadOnly', scope: 'tenant', fields: { label: field() } },
    { name: 'Line', scope: 'company', fields: { parentId: { type: 'ref', entity: 'Newest' }, position: { type: 'integer', sort: true } }, defaultSort: 'position' },
  ],
  routes: [
    ...['Newest', 'ByLabel', 'Translated', 'UniqueCode', 'UniqueMixed'].map((entity) => ({ entity, path: `/api/${entity.toLowerCase()}` })),
    { entity: 'ReadOnly', path: '/api/read-only', operations: ['read'] },
    { entity: 'Line', path: '/api/newest/:parentId/lines' },
  ],
} as unknown as Manifest;

t.test('the default sort, its index, and where none is declared', async (t) => {
  t.same(sortKeys('name,-createdAt'), [
    { field: 'name', desc: false },
    { field: 'createdAt', desc: true },
  ]);
  const models = new Map(buildEntityModels([manifest]).map((m) => [m.name, m]));
  const plan = (name: string) => {
    const e = manifest.entities!.find((x) => x.name === name)!;
    const scope = e.scope === 'company' ? ['companyId'] : [];
    const uniques = [
      ...Object.entries(e.fields)
        .filter(([, f]) => f.unique)
        .map(([n]) => [...scope, n]),
      ...(e.unique ?? []),
    ];
    return defaultSortIndex(models.get(name)!, isListed(manifest, name), uniques);
  };
  t.same(plan('Newest'), [{ name: 'companyId' }, { name: 'createdAt', sort: 'DESC' }, { name: 'id' }], 'no defaultSort: newest first');
  t.same(plan('ByLabel'), [{ name: 'companyId' }, { name: 'label' }, { name: 'day', sort: 'DESC' }, { name: 'id' }], 'each key in its direction, id last');
  t.same(plan('Line'), [{ name: 'companyId' }, { name: 'parentId' }, { name: 'position' }, { name: 'id' }], 'a nested route: its parent ref before the sort');
  t.equal(plan('Translated'), null, "a translatable key sorts by the reader's language: no index serves it");
  t.equal(plan('UniqueCode'), null, 'a unique key on (company, code) already serves -code');
  t.ok(plan('UniqueMixed'), 'a unique key cannot serve two directions at once');
  t.equal(plan('Unlisted'), null, 'no route lists it');
  t.equal(plan('ReadOnly'), null, 'its route has no list operation');
});

t.test('the shipped modules on a real schema', async (t) => {
  const kit = await kernelKit(t);
  const kernel = await kit.open();
  const orm = kernel.dbs.main;
  const conn = orm.em.getConnection();
  const schema = `tenant_lp_${randomBytes(5).toString('hex')}`;
  t.teardown(() => conn.execute(`drop schema if exists "${schema}" cascade`));
  await migrateSchema(orm, schema, kernel.versions);
  const defs = ((await conn.execute('select tablename, indexdef from pg_indexes where schemaname = ?', [schema])) as { tablename: string; indexdef: string }[]).map((r) => [
    r.tablename,
    r.indexdef.replace(/^.* USING btree /, ''),
  ]);
  const on = (table: string) =>
    defs
      .filter(([tb]) => tb === table)
      .map(([, d]) => d)
      .sort();

  t.ok(on('catalog_products').includes('(company_id, created_at DESC, id)'), `products: newest first per company (${on('catalog_products').join(' ')})`);
  t.notOk(
    on('catalog_categories').some((d) => d.includes('name')),
    'categories sort by their translated name: no index',
  );
  t.ok(on('crm_quote_lines').includes('(company_id, quote_id, "position", id)'), 'quote lines, listed per quote');
  t.same(await pendingStatements(orm, schema), [], 'a second diff finds nothing to change (the index is read back as declared)');
});
