// Named JSON Schemas of a manifest ("schemas"): the loader checks their names,
// shapes and references; the app registers each once under its name, so a json
// field's { "$ref": "<Name>" } and a handler's Type.Ref('<Name>') validate,
// serialise and document through it, as one OpenAPI component.
import t, { type Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { loadManifests } from '../../../core/manifest/loader.ts';
import { ManifestError } from '../../../core/manifest/errors.ts';
import { openKernel } from '../../../core/kernel.ts';
import { buildApp } from '../../../core/app.ts';
import { copyManifests, editManifest, entityOf, FIXTURES, type Json } from '../../fixtures/kernels.ts';
import { build, testConfig } from '../../helper.ts';
import { modulesWith, SDK_URL } from '../../support/manifests.ts';

const MINIMAL = join(FIXTURES, 'manifests', 'minimal');
const SPEC = { type: 'object', required: ['size'], properties: { size: { type: 'integer', minimum: 1 } }, additionalProperties: false };

async function refused(t: Test, dir: string, file: string, pointer: string): Promise<void> {
  const err = await loadManifests(dir).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ManifestError)) return void t.fail(`expected a ManifestError, got ${String(err)}`);
  t.equal(err.code, 'MANIFEST_INVALID');
  t.equal(err.file, join(dir, file), 'file');
  t.equal(err.pointer, pointer, 'pointer');
}

/** The minimal fixture with shop's `schemas` and the json field `spec` of its Item. */
function shopWith(t: Test, schemas: Json, spec?: Json): string {
  const dir = copyManifests(t, MINIMAL);
  editManifest(dir, 'shop.json', (m) => {
    m.schemas = schemas;
    if (spec) entityOf(m, 'Item').fields.spec = { type: 'json', schema: spec };
  });
  return dir;
}

const { manifestsDir, pluginsDir } = modulesWith(t, {
  probe: {
    manifest: {
      name: 'Probe',
      permissions: [{ code: 'test:probe:manage', description: 'Gadgets', grants: [{ action: ['read', 'create', 'update'], subject: 'ProbeGadget' }] }],
      schemas: {
        ProbeSpec: { ...SPEC, properties: { size: { type: 'integer', minimum: 1 }, tags: { type: 'array', items: { $ref: 'ProbeTag' } } }, description: 'what a gadget is made to' },
        ProbeTag: { type: 'string', pattern: '^[a-z]+$' },
      },
      entities: [
        {
          name: 'ProbeGadget',
          scope: 'tenant',
          fields: {
            name: { type: 'string', required: true },
            spec: { type: 'json', required: true, schema: { $ref: 'ProbeSpec' }, description: 'its spec' },
            spare: { type: 'json', schema: { $ref: 'ProbeSpec' } },
          },
        },
        // no route: its webhook payload holds its row inline
        { name: 'ProbeLog', scope: 'tenant', fields: { spec: { type: 'json', schema: { $ref: 'ProbeSpec' } } } },
      ],
      routes: [
        { entity: 'ProbeGadget', path: '/api/probe/gadgets' },
        { method: 'POST', path: '/api/probe/specs', handler: 'echoSpec', summary: 'Echo a spec', access: { action: 'read', subject: 'ProbeGadget' } },
      ],
    },
    plugin: `
import { handler, Type } from '${SDK_URL}';
export const handlers = {
  echoSpec: handler({ body: Type.Ref('ProbeSpec'), response: { 200: Type.Ref('ProbeSpec') } }, async (ctx, request) => ({ ...request.body, extra: 'dropped' })),
};
`,
  },
});

const ctx = await build(t, { config: { manifestsDir, pluginsDir } });
const tenant = await ctx.tenant();
const user = await ctx.user(tenant, { codes: ['test:probe:manage'] });
const as = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => ctx.as(user.token, { method, url, ...(payload ? { payload } : {}) });
const paths = (res: { json(): { errors?: { path: string }[] } }) => (res.json().errors ?? []).map((e) => e.path).sort();

t.test('the loader', async (t) => {
  await t.test('takes named schemas, referring to one another and from a field', async (t) => {
    const dir = shopWith(
      t,
      { ShopSpec: { ...SPEC, properties: { size: { type: 'integer' }, tags: { type: 'array', items: { $ref: 'ShopTag' } } } }, ShopTag: { type: 'string' } },
      { $ref: 'ShopSpec' },
    );
    const shop = (await loadManifests(dir)).find((l) => l.manifest.id === 'shop')!;
    t.same(Object.keys(shop.manifest.schemas!), ['ShopSpec', 'ShopTag']);
  });

  const cases: [string, Json, Json | undefined, string][] = [
    ['a name without the module prefix', { ItemSpec: SPEC }, undefined, '/schemas/ItemSpec'],
    ['a prefix that is no word of its own', { Shopping: SPEC }, undefined, '/schemas/Shopping'],
    ['a name that is no PascalCase', { shop_spec: SPEC }, undefined, '/schemas/shop_spec'],
    ['a name of an entity component', { ShopItemCreate: SPEC }, undefined, '/schemas/ShopItemCreate'],
    ['a schema that is no object', { ShopSpec: 5 }, undefined, '/schemas/ShopSpec'],
    ['a schema that does not compile', { ShopSpec: { type: 'whole number' } }, undefined, '/schemas/ShopSpec'],
    ['an $id of its own', { ShopSpec: { ...SPEC, properties: { size: { $id: 'Size', type: 'integer' } } } }, undefined, '/schemas/ShopSpec/properties/size/$id'],
    ['an unknown name in a named schema', { ShopSpec: { type: 'array', items: { $ref: 'ShopTag' } } }, undefined, '/schemas/ShopSpec/items/$ref'],
    ['an unknown name in a field', { ShopSpec: SPEC }, { $ref: 'ShopSpecs' }, '/entities/0/fields/spec/schema/$ref'],
    ['a field naming a schema of another module', {}, { $ref: 'BaseSpec' }, '/entities/0/fields/spec/schema/$ref'],
    ['a field schema with an $id', {}, { $id: 'ShopSpec', type: 'object' }, '/entities/0/fields/spec/schema/$id'],
    ['a field schema that does not compile', {}, { type: 'object', required: 'size' }, '/entities/0/fields/spec/schema'],
  ];
  for (const [what, schemas, spec, pointer] of cases) {
    await t.test(what, async (t) => {
      const dir = shopWith(t, schemas, spec);
      editManifest(dir, 'base.json', (m) => {
        m.schemas = { BaseSpec: SPEC };
      });
      await refused(t, dir, 'shop.json', pointer);
    });
  }

  await t.test('a name another module holds', async (t) => {
    // shop's prefix is a word of shop-extra's: ShopExtraSpec is a name either may take, once
    const dir = shopWith(t, { ShopExtraSpec: SPEC });
    writeFileSync(join(dir, 'zz.json'), JSON.stringify({ id: 'shop-extra', name: 'Shop extra', version: '1.0.0', schemas: { ShopExtraSpec: SPEC } }));
    await refused(t, dir, 'zz.json', '/schemas/ShopExtraSpec');
  });
});

t.test('a json field validated through a named schema', async (t) => {
  const bad = await as('POST', '/api/probe/gadgets', { name: 'G', spec: { size: 0, tags: ['ok', 'Not ok'] }, spare: { size: 'big' } });
  t.equal(bad.statusCode, 400, bad.body);
  t.equal(bad.json().code, 'VALIDATION_FAILED');
  t.same(paths(bad), ['/spare/size', '/spec/size', '/spec/tags/1'], 'each fault at its path in the value');
  t.same(paths(await as('POST', '/api/probe/gadgets', { name: 'G', spec: { size: 1, colour: 'red' } })), ['/spec/colour'], 'a property the schema lacks');
  t.same(paths(await as('POST', '/api/probe/gadgets', { name: 'G', spec: null })), ['/spec'], 'a required one is no null');

  const created = await as('POST', '/api/probe/gadgets', { name: 'G', spec: { size: 2, tags: ['a'] }, spare: null });
  t.equal(created.statusCode, 201, created.body);
  t.same(created.json().spec, { size: 2, tags: ['a'] }, 'serialised through it');
  t.equal(created.json().spare, null, 'an optional one may be null');
  const id = created.json().id as string;
  t.same(paths(await as('PATCH', `/api/probe/gadgets/${id}`, { spare: { size: -1 } })), ['/spare/size'], 'a patch too');
  t.same((await as('GET', `/api/probe/gadgets/${id}`)).json().spec, { size: 2, tags: ['a'] });
  t.same((await as('GET', '/api/probe/gadgets')).json().items[0].spec, { size: 2, tags: ['a'] }, 'a list');
});

t.test("a handler's body and response naming it", async (t) => {
  const bad = await as('POST', '/api/probe/specs', { size: 0 });
  t.equal(bad.statusCode, 400);
  t.same(paths(bad), ['/size']);
  const ok = await as('POST', '/api/probe/specs', { size: 3, tags: ['x'] });
  t.equal(ok.statusCode, 200, ok.body);
  t.same(ok.json(), { size: 3, tags: ['x'] }, 'the response is serialised through it: what it lacks is dropped');
});

t.test('OpenAPI holds each once, as the component of its name', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const schemas = doc.components.schemas;
  t.match(schemas.ProbeSpec, { type: 'object', description: 'what a gadget is made to', properties: { tags: { items: ref('ProbeTag') } } });
  t.match(schemas.ProbeTag, { type: 'string' });
  t.same(schemas.ProbeGadgetCreate.properties.spec, { allOf: [ref('ProbeSpec')], description: 'its spec' }, 'a required field: described beside its reference');
  t.same(schemas.ProbeGadgetCreate.properties.spare, { anyOf: [ref('ProbeSpec'), { type: 'null' }] }, 'an optional one: or null');
  t.same(doc.paths['/api/probe/specs'].post.requestBody.content['application/json'].schema, ref('ProbeSpec'), "the handler's body");
  t.same(doc.paths['/api/probe/specs'].post.responses['200'].content['application/json'].schema, ref('ProbeSpec'), 'and response');
  const [created] = Object.entries(doc.webhooks as Json).filter(([type]) => /^probe\.log\.created$/.test(type));
  t.ok(created, 'the route-less entity has its webhook');
  t.same(created[1].post.requestBody.content['application/json'].schema.properties.data.properties.row.properties.spec.anyOf[0], ref('ProbeSpec'), 'its inline row refers to the component');
  await SwaggerParser.validate(structuredClone(doc));
  t.pass('every reference resolves');
});

t.test('a handler declaring a schema $id inline stops the start', async (t) => {
  const dirs = modulesWith(t, {
    inline: {
      manifest: { name: 'Inline', routes: [{ method: 'POST', path: '/api/inline', handler: 'take', summary: 'Take', access: { action: 'read', subject: 'Product' } }] },
      plugin: `
import { handler, Type } from '${SDK_URL}';
export const handlers = { take: handler({ body: Type.Object({ n: Type.Integer() }, { $id: 'InlineBody' }) }, async () => ({})) };
`,
    },
  });
  const kernel = await openKernel(testConfig(dirs));
  t.teardown(() => kernel.close());
  await t.rejects(buildApp(kernel, { logger: false }), { code: 'MANIFEST_INVALID', pointer: '/routes/0/handler' });
});
