// The analytics query language is declared once, as the named schema
// BiAnalyticsQuery of manifests/bi.json; plugins/bi/query.ts refers to it and
// checks GET ?query= by hand with constants of its own (parseQuery, for its
// messages). These tests hold the two together: the same patterns and values,
// and the same verdict on queries at and beyond every bound.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parseManifest } from '../../../core/manifest/loader.ts';
import { FILTER_OPS } from '../../../core/plugin-api.ts';
import { AGGREGATIONS, AnalyticsQuery, DAY, FIELD, GRANULARITIES, NAME, parseQuery, TABLE } from '../../../plugins/bi/query.ts';

type Json = Record<string, any>;

const manifest = parseManifest(readFileSync('manifests/bi.json', 'utf8'), 'manifests/bi.json');
const schemas = manifest.schemas as Record<string, Json>;
const query = schemas.BiAnalyticsQuery;
const ajv = (addFormatsModule as unknown as (a: Ajv) => Ajv)(new Ajv({ strict: false, allErrors: true }));
for (const [name, schema] of Object.entries(schemas)) ajv.addSchema({ $id: name, ...schema });
const bySchema = ajv.getSchema('BiAnalyticsQuery')!;
const byParser = (q: unknown) => {
  try {
    parseQuery(q, 'UTC', () => 'date');
    return true;
  } catch (err) {
    if ((err as { code?: string }).code !== 'VALIDATION_FAILED') throw err;
    return false;
  }
};

t.test("the handlers' schema is a reference to the manifest's", async (t) => {
  t.same(AnalyticsQuery, { $ref: 'BiAnalyticsQuery' });
  t.same(
    manifest.entities!.filter((e) => e.fields.query).map((e) => [e.name, e.fields.query.schema]),
    [
      ['BiQuery', { $ref: 'BiStoredQuery' }],
      ['BiWidget', { $ref: 'BiStoredQuery' }],
    ],
    'saved queries and widgets store it',
  );
});

t.test("parseQuery's patterns and values are the schema's", async (t) => {
  const p = query.properties;
  const item = (k: string) => p[k].items.properties;
  t.equal(p.table.pattern, TABLE, 'table');
  t.equal(p.dimensions.items.pattern, FIELD, 'dimensions');
  t.same([item('measures').field.pattern, item('timeDimensions').field.pattern, item('filters').field.pattern], [FIELD, FIELD, FIELD], 'fields');
  t.same([item('measures').name.pattern, item('timeDimensions').name.pattern, item('order').by.pattern], [NAME, NAME, NAME], 'result column names');
  t.equal(item('timeDimensions').dateRange.items.pattern, DAY, 'days');
  t.same(item('measures').agg.enum, AGGREGATIONS);
  t.same(item('timeDimensions').granularity.enum, GRANULARITIES);
  t.same(item('filters').op.enum, FILTER_OPS);
});

t.test('the schema and parseQuery agree at and beyond every bound', async (t) => {
  const base = { table: 'Opportunity', measures: [{ agg: 'count' }] };
  const n = (count: number, make: (i: number) => unknown) => Array.from({ length: count }, (_, i) => make(i));
  const cases: [string, Json, boolean][] = [
    ['the least query', base, true],
    ['a data source table', { ...base, table: 'warehouse.orders' }, true],
    ['a saved query as a table', { ...base, table: 'query:0190a6e4-8f00-7000-8000-000000000000' }, true],
    ['no table', { measures: base.measures }, false],
    ['a table that is no name', { ...base, table: 'a b' }, false],
    ['an application', { ...base, app: '0190a6e4-8f00-7000-8000-000000000000' }, true],
    ['an application that is no id', { ...base, app: 'shop' }, false],
    ['a property the language lacks', { ...base, having: [] }, false],
    ['20 measures', { ...base, measures: n(20, (i) => ({ agg: 'count', name: `m${i}` })) }, true],
    ['21 measures', { ...base, measures: n(21, (i) => ({ agg: 'count', name: `m${i}` })) }, false],
    ['a measure with a property too many', { ...base, measures: [{ agg: 'count', as: 'n' }] }, false],
    ['an unknown aggregation', { ...base, measures: [{ agg: 'median', field: 'amount' }] }, false],
    ['a column name that is none', { ...base, measures: [{ agg: 'count', name: '1 n' }] }, false],
    ['a dimension along a reference', { ...base, dimensions: ['customerId.name'] }, true],
    ['a dimension that is no field', { ...base, dimensions: ['customer-id'] }, false],
    ['10 dimensions', { ...base, dimensions: n(10, (i) => `d${i}`) }, true],
    ['11 dimensions', { ...base, dimensions: n(11, (i) => `d${i}`) }, false],
    ['3 time dimensions', { ...base, timeDimensions: n(3, (i) => ({ field: `t${i}`, granularity: 'month' })) }, true],
    ['4 time dimensions', { ...base, timeDimensions: n(4, (i) => ({ field: `t${i}`, granularity: 'month' })) }, false],
    ['an unknown granularity', { ...base, timeDimensions: [{ field: 'day', granularity: 'decade' }] }, false],
    ['a date range', { ...base, timeDimensions: [{ field: 'day', dateRange: ['2026-01-01', '2026-12-31'] }] }, true],
    ['a date range of one day', { ...base, timeDimensions: [{ field: 'day', dateRange: ['2026-01-01'] }] }, false],
    ['a day that is no YYYY-MM-DD', { ...base, timeDimensions: [{ field: 'day', dateRange: ['2026-1-1', '2026-12-31'] }] }, false],
    ['30 filters', { ...base, filters: n(30, () => ({ field: 'stage', op: 'set' })) }, true],
    ['31 filters', { ...base, filters: n(31, () => ({ field: 'stage', op: 'set' })) }, false],
    ['an unknown operator', { ...base, filters: [{ field: 'stage', op: 'like', value: 'x' }] }, false],
    ['10 sort keys', { ...base, order: n(10, () => ({ by: 'count', dir: 'desc' })) }, true],
    ['11 sort keys', { ...base, order: n(11, () => ({ by: 'count' })) }, false],
    ['a direction that is none', { ...base, order: [{ by: 'count', dir: 'up' }] }, false],
    ['the largest limit', { ...base, limit: 10000 }, true],
    ['a limit too large', { ...base, limit: 10001 }, false],
    ['a limit of 0', { ...base, limit: 0 }, false],
    ['the largest offset', { ...base, offset: 1000000 }, true],
    ['an offset too large', { ...base, offset: 1000001 }, false],
    ['a negative offset', { ...base, offset: -1 }, false],
  ];
  for (const [what, q, valid] of cases) {
    t.equal(bySchema(q), valid, `${what}: the schema`);
    t.equal(byParser(q), valid, `${what}: parseQuery`);
  }
});

t.test('a stored query is one without an application', async (t) => {
  const stored = ajv.getSchema('BiStoredQuery')!;
  t.ok(stored({ table: 'warehouse.orders', measures: [{ agg: 'count' }] }));
  t.notOk(stored({ table: 'warehouse.orders', measures: [{ agg: 'count' }], app: '0190a6e4-8f00-7000-8000-000000000000' }));
  t.same(
    stored.errors!.map((e) => [e.instancePath, e.keyword]),
    [['/app', 'false schema']],
  );
  t.notOk(stored({ table: 'warehouse.orders', measures: [{ agg: 'count' }], limit: 0 }), "the analytics query's rules hold");
});
