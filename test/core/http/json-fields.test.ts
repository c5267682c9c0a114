// A json field reads back as stored whatever its manifest schema lists: an
// object schema that leaves keys open ({ "type": "object" }, as deep as it
// goes) keeps every key in create, read, list and PATCH answers, so a client
// writing back what it read keeps the value; one that closes them
// (additionalProperties: false) answers only what it lists.
import t from 'tap';
import { build } from '../../helper.ts';
import { modulesWith } from '../../support/manifests.ts';

const { manifestsDir, pluginsDir } = modulesWith(t, {
  probe: {
    manifest: {
      name: 'Probe',
      permissions: [{ code: 'test:probe:manage', description: 'Widgets', grants: [{ action: ['read', 'create', 'update'], subject: 'ProbeWidget' }] }],
      entities: [
        {
          name: 'ProbeWidget',
          scope: 'tenant',
          fields: {
            name: { type: 'string', required: true },
            open: { type: 'json', schema: { type: 'object', description: 'any keys' } },
            nested: { type: 'json', required: true, schema: { type: 'object', properties: { inner: { type: 'object' } } } },
            rows: { type: 'json', schema: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } } },
            either: { type: 'json', schema: { anyOf: [{ type: 'object' }, { type: 'string' }] } },
          },
        },
      ],
      routes: [{ entity: 'ProbeWidget', path: '/api/probe/widgets' }],
    },
    plugin: 'export const handlers = {};\n',
  },
});

const ctx = await build(t, { config: { manifestsDir, pluginsDir } });
const tenant = await ctx.tenant();
const user = await ctx.user(tenant, { codes: ['test:probe:manage'] });
const as = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => ctx.as(user.token, { method, url, ...(payload ? { payload } : {}) });

const STORED = {
  open: { projectId: 'p-1', limit: 3, deep: { a: [1, { b: 2 }] } },
  nested: { inner: { x: 1, y: { z: true } }, other: 'kept' },
  rows: [{ n: 1, label: 'one' }, { n: 2 }],
  either: { any: 'key' },
};

t.test('open object schemas read back every key', async (t) => {
  const created = await as('POST', '/api/probe/widgets', { name: 'W', ...STORED });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), STORED, 'create');
  const id = created.json().id as string;
  t.match((await as('GET', `/api/probe/widgets/${id}`)).json(), STORED, 'read');
  t.match((await as('GET', '/api/probe/widgets')).json().items[0], STORED, 'list');
  const patched = await as('PATCH', `/api/probe/widgets/${id}`, { name: 'V' });
  t.equal(patched.statusCode, 200, patched.body);
  t.match(patched.json(), { name: 'V', ...STORED }, 'a PATCH naming other fields answers them unchanged');

  // a read-modify-write client sends back what it read: nothing is lost
  const read = (await as('GET', `/api/probe/widgets/${id}`)).json();
  const written = await as('PATCH', `/api/probe/widgets/${id}`, { open: read.open, nested: read.nested, rows: read.rows, either: read.either });
  t.equal(written.statusCode, 200, written.body);
  t.match((await as('GET', `/api/probe/widgets/${id}`)).json(), STORED, 'stored as before');
});

t.test('OpenAPI: the response says the keys stay open, the request schema is as declared', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const out = doc.components.schemas.ProbeWidget.properties;
  t.match(out.open, { type: ['object', 'null'], additionalProperties: true });
  t.match(out.nested, { type: 'object', additionalProperties: true, properties: { inner: { type: 'object', additionalProperties: true } } });
  t.match(out.rows.items, { type: 'object', additionalProperties: true });
  t.notOk('additionalProperties' in doc.components.schemas.ProbeWidgetCreate.properties.open, "the body schema is the manifest's");
});
