// The manifest loader refuses to start on any fault, naming the file and the
// JSON pointer of the fault; it orders modules by dependsOn. Fixture manifests
// live in test/fixtures/manifests/minimal and are changed in temp copies.
import t, { type Test } from 'tap';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { loadManifests } from '../../../core/manifest/loader.ts';
import { ManifestError } from '../../../core/manifest/errors.ts';
import { manifestJsonSchema, MANIFEST_SCHEMA_FILE } from '../../../scripts/manifest-schema.ts';
import { copyManifests, editManifest, entityOf, FIXTURES, MANIFESTS, type Json } from '../../fixtures/kernels.ts';

const MINIMAL = join(FIXTURES, 'manifests', 'minimal');

async function refused(t: Test, dir: string, file: string, pointer: string, names: string[] = []): Promise<void> {
  const err = await loadManifests(dir).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ManifestError)) {
    t.fail(`expected a ManifestError, got ${String(err)}`);
    return;
  }
  t.equal(err.code, 'MANIFEST_INVALID');
  t.equal(err.file, join(dir, file), 'file');
  t.equal(err.pointer, pointer, 'pointer');
  for (const name of names) t.ok(err.message.includes(name), `names ${name}`);
}

const write = (dir: string, file: string, m: Json) => writeFileSync(join(dir, file), JSON.stringify(m));
const module = (id: string, more: Json = {}): Json => ({ id, name: id, version: '1.0.0', ...more });

t.test('the fixture modules load, dependencies first', async (t) => {
  const dir = copyManifests(t, MINIMAL);
  const loaded = await loadManifests(dir);
  t.same(
    loaded.map((l) => l.manifest.id),
    ['base', 'shop'],
  );
  t.equal(loaded[1].file, join(dir, 'shop.json'));
});

t.test('modules are ordered by dependsOn, not by file name', async (t) => {
  const dir = copyManifests(t, MINIMAL);
  write(dir, 'a-app.json', module('app', { dependsOn: ['shop', 'base'] }));
  write(dir, 'aa-report.json', module('report', { dependsOn: ['app'] }));
  write(dir, 'z-lone.json', module('lone'));
  const ids = (await loadManifests(dir)).map((l) => l.manifest.id);
  t.same(ids, ['base', 'shop', 'app', 'report', 'lone']);
});

t.test('invalid JSON points at the whole document', async (t) => {
  const dir = copyManifests(t, MINIMAL);
  writeFileSync(join(dir, 'shop.json'), '{ "id": "shop", ');
  await refused(t, dir, 'shop.json', '');
});

t.test('schema violations point at the offending value', async (t) => {
  const cases: [string, (m: Json) => void, string][] = [
    [
      'bad version',
      (m) => {
        m.version = '1.0';
      },
      '/version',
    ],
    [
      'unknown field type',
      (m) => {
        entityOf(m, 'Item').fields.code.type = 'money';
      },
      '/entities/0/fields/code/type',
    ],
    [
      'missing scope',
      (m) => {
        delete entityOf(m, 'Item').scope;
      },
      '/entities/0',
    ],
    [
      'missing module name',
      (m) => {
        delete m.name;
      },
      '',
    ],
    [
      'bad permission code',
      (m) => {
        m.permissions[0].code = 'shop-manage';
      },
      '/permissions/0/code',
    ],
    [
      'bad route path',
      (m) => {
        m.routes[0].path = 'api/items';
      },
      '/routes/0/path',
    ],
    [
      'custom route without summary',
      (m) => {
        delete m.routes[1].summary;
      },
      '/routes/1',
    ],
    [
      'grant subject of the wrong type',
      (m) => {
        m.permissions[0].grants[0].subject = 5;
      },
      '/permissions/0/grants/0/subject',
    ],
    [
      'default of no JSON scalar type',
      (m) => {
        entityOf(m, 'Item').fields.price.default = { a: 1 };
      },
      '/entities/0/fields/price/default',
    ],
  ];
  for (const [name, mutate, pointer] of cases) {
    await t.test(name, async (t) => {
      const dir = copyManifests(t, MINIMAL);
      editManifest(dir, 'shop.json', mutate);
      await refused(t, dir, 'shop.json', pointer);
    });
  }
});

t.test('an unknown property points at the property itself', async (t) => {
  const cases: [string, (m: Json) => void, string][] = [
    [
      'top level',
      (m) => {
        m.colour = 'red';
      },
      '/colour',
    ],
    [
      'field',
      (m) => {
        entityOf(m, 'Item').fields.code.bogus = true;
      },
      '/entities/0/fields/code/bogus',
    ],
    [
      'entity',
      (m) => {
        entityOf(m, 'Item').scopes = 'company';
      },
      '/entities/0/scopes',
    ],
    [
      'CRUD route',
      (m) => {
        m.routes[0].bogus = 1;
      },
      '/routes/0/bogus',
    ],
    [
      'custom route',
      (m) => {
        m.routes[1].handlr = 'x';
      },
      '/routes/1/handlr',
    ],
    [
      'grant',
      (m) => {
        m.permissions[0].grants[0].when = {};
      },
      '/permissions/0/grants/0/when',
    ],
    [
      'name needing escapes',
      (m) => {
        m['a/b~c'] = 1;
      },
      '/a~1b~0c',
    ],
  ];
  for (const [name, mutate, pointer] of cases) {
    await t.test(name, async (t) => {
      const dir = copyManifests(t, MINIMAL);
      editManifest(dir, 'shop.json', mutate);
      await refused(t, dir, 'shop.json', pointer);
    });
  }
});

t.test('field and entity rules the schema cannot say', async (t) => {
  const F = '/entities/0/fields';
  const cases: [string, Json, string][] = [
    ['enum without values', { unit: { type: 'enum' } }, `${F}/unit`],
    ['values on a string', { unit: { type: 'string', values: ['a'] } }, `${F}/unit/values`],
    ['enum value with a line break', { unit: { type: 'enum', values: ['a', 'b\nc'] } }, `${F}/unit/values/1`],
    ['ref without entity', { ownerId: { type: 'ref' } }, `${F}/ownerId`],
    ['ref not named ...Id', { owner: { type: 'ref', entity: 'Thing' } }, `${F}/owner`],
    ['entity on a string', { note: { type: 'string', entity: 'Thing' } }, `${F}/note/entity`],
    ['onDelete on a string', { note: { type: 'string', onDelete: 'cascade' } }, `${F}/note/onDelete`],
    ['translatable integer', { count: { type: 'integer', translatable: true } }, `${F}/count/translatable`],
    ['translatable unique', { label: { type: 'string', translatable: true, unique: true } }, `${F}/label/unique`],
    ['translatable with a default', { label: { type: 'string', translatable: true, default: 'x' } }, `${F}/label/default`],
    ['decimal scale > precision', { rate: { type: 'decimal', precision: 4, scale: 5 } }, `${F}/rate/scale`],
    ['decimal precision below the default scale', { rate: { type: 'decimal', precision: 1 } }, `${F}/rate/precision`],
    ['precision on an integer', { count: { type: 'integer', precision: 5 } }, `${F}/count/precision`],
    ['maxLength on an integer', { count: { type: 'integer', maxLength: 5 } }, `${F}/count/maxLength`],
    ['minLength > maxLength', { note: { type: 'string', minLength: 9, maxLength: 3 } }, `${F}/note/minLength`],
    ['minimum on a string', { note: { type: 'string', minimum: 1 } }, `${F}/note/minimum`],
    ['minimum > maximum', { count: { type: 'integer', minimum: 5, maximum: 1 } }, `${F}/count/minimum`],
    ['search on an integer', { count: { type: 'integer', search: true } }, `${F}/count/search`],
    ['setNull on a required ref', { ownerId: { type: 'ref', entity: 'Thing', required: true, onDelete: 'setNull' } }, `${F}/ownerId/onDelete`],
    ['internal and sortable', { secret: { type: 'string', internal: true, sort: true } }, `${F}/secret/internal`],
    ['invalid pattern', { note: { type: 'string', pattern: '([a-z' } }, `${F}/note/pattern`],
    ['reserved name', { version: { type: 'integer' } }, `${F}/version`],
    ['companyId on a company-scoped entity', { companyId: { type: 'string' } }, `${F}/companyId`],
    ['field name not camelCase', { Bad_name: { type: 'string' } }, `${F}/Bad_name`],
    ['two fields of one column', { fooBar: { type: 'string' }, fooBAR: { type: 'string' } }, `${F}/fooBAR`],
    ['a field on a kernel column', { createdAT: { type: 'datetime' } }, `${F}/createdAT`],
    ['enum default not a value', { unit: { type: 'enum', values: ['a'], default: 'b' } }, `${F}/unit/default`],
    ['integer default of the wrong type', { count: { type: 'integer', default: 'many' } }, `${F}/count/default`],
    ['integer default outside minimum', { count: { type: 'integer', minimum: 0, default: -1 } }, `${F}/count/default`],
    ['decimal default beyond its scale', { rate: { type: 'decimal', default: '1.234' } }, `${F}/rate/default`],
    ['boolean default as a string', { flag: { type: 'boolean', default: 'yes' } }, `${F}/flag/default`],
    ['date default not a date', { day: { type: 'date', default: '31.01.2025' } }, `${F}/day/default`],
    ['datetime default', { at: { type: 'datetime', default: '2025-01-31T12:00:00Z' } }, `${F}/at/default`],
    ['string default longer than maxLength', { note: { type: 'string', maxLength: 2, default: 'abc' } }, `${F}/note/default`],
    ['string default with a line break', { note: { type: 'text', default: 'a\nb' } }, `${F}/note/default`],
    ['default on a ref', { ownerId: { type: 'ref', entity: 'Thing', default: '00000000-0000-0000-0000-000000000000' } }, `${F}/ownerId/default`],
    ['required field defaulting to null', { note: { type: 'string', required: true, default: null } }, `${F}/note/default`],
  ];
  for (const [name, fields, pointer] of cases) {
    await t.test(name, async (t) => {
      const dir = copyManifests(t, MINIMAL);
      editManifest(dir, 'shop.json', (m) => Object.assign(entityOf(m, 'Item').fields, fields));
      await refused(t, dir, 'shop.json', pointer);
    });
  }
  const entityCases: [string, (e: Json) => void, string][] = [
    [
      'listDefaults on a field that is no filter',
      (e) => {
        e.listDefaults = { kind: 'a' };
      },
      '/entities/0/listDefaults/kind',
    ],
    [
      'listDefaults with a value outside the enum',
      (e) => {
        e.fields.kind.filter = true;
        e.listDefaults = { kind: 'z' };
      },
      '/entities/0/listDefaults/kind',
    ],
    [
      'a named filter taking a list parameter',
      (e) => {
        e.filters = { sort: { description: 'x', where: { kind: 'a' } } };
      },
      '/entities/0/filters/sort',
    ],
    [
      'a named filter on an unknown field',
      (e) => {
        e.filters = { cheap: { description: 'x', where: { cost: { $lt: 1 } } } };
      },
      '/entities/0/filters/cheap/where/cost',
    ],
    [
      'unique key naming an unknown field',
      (e) => {
        e.unique = [['code', 'nope']];
      },
      '/entities/0/unique/0/1',
    ],
    [
      'listColumns naming an unknown field',
      (e) => {
        e.listColumns = ['nope'];
      },
      '/entities/0/listColumns/0',
    ],
    [
      'defaultSort on a field that is not sortable',
      (e) => {
        e.defaultSort = 'code,-createdAt';
      },
      '/entities/0/defaultSort',
    ],
    [
      'derived table name longer than 63 characters',
      (e) => {
        e.name = `Item${'Long'.repeat(14)}`;
      },
      '/entities/0/name',
    ],
  ];
  for (const [name, mutate, pointer] of entityCases) {
    await t.test(name, async (t) => {
      const dir = copyManifests(t, MINIMAL);
      editManifest(dir, 'shop.json', (m) => {
        mutate(entityOf(m, 'Item'));
        m.routes = [];
        m.permissions[0].grants[0].subject = 'all';
      });
      await refused(t, dir, 'shop.json', pointer);
    });
  }
  await t.test('companyId in a unique key of a tenant-scoped entity', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'base.json', (m) => {
      entityOf(m, 'Thing').unique = [['name', 'companyId']];
    });
    await refused(t, dir, 'base.json', '/entities/0/unique/0/1');
  });
  await t.test('a valid default of every type is accepted', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) =>
      Object.assign(entityOf(m, 'Item').fields, {
        note: { type: 'text', default: "it's" },
        count: { type: 'integer', default: -3 },
        rate: { type: 'decimal', precision: 5, scale: 4, default: 0.5 },
        flag: { type: 'boolean', default: false },
        day: { type: 'date', default: '2025-01-31' },
        meta: { type: 'json', default: 'x' },
      }),
    );
    t.equal((await loadManifests(dir)).length, 2);
  });
});

t.test('routes and menu', async (t) => {
  const cases: [string, (m: Json) => void, string][] = [
    [
      'menu permission not declared by the module',
      (m) => {
        m.menu = [{ label: 'X', path: '/x', permission: 'test:base:view' }];
      },
      '/menu/0/permission',
    ],
    [
      'route declared twice',
      (m) => {
        m.routes.push({ entity: 'Item', path: '/api/items' });
      },
      '/routes/2',
    ],
    [
      'route for an unknown entity',
      (m) => {
        m.routes[0].entity = 'Nope';
      },
      '/routes/0/entity',
    ],
    [
      'custom route on an unknown subject',
      (m) => {
        m.routes[1].access.subject = 'Nope';
      },
      '/routes/1/access/subject',
    ],
    [
      "a route over another module's entity with path parameters",
      (m) => {
        m.routes.push({ entity: 'Thing', path: '/api/items/:thingId/things' });
      },
      '/routes/2/path',
    ],
    [
      'a list naming both "by" and "where"',
      (m) => {
        m.routes[0].lists = [{ path: '/api/items/mine', by: 'thingId', where: { kind: 'a' }, name: 'Mine' }];
      },
      '/routes/0/lists/0',
    ],
    [
      'a list over a condition without a name',
      (m) => {
        m.routes[0].lists = [{ path: '/api/items/mine', where: { kind: 'a' } }];
      },
      '/routes/0/lists/0/name',
    ],
    [
      'a list over a condition with path parameters',
      (m) => {
        m.routes[0].lists = [{ path: '/api/items/:thingId/mine', where: { kind: 'a' }, name: 'Mine' }];
      },
      '/routes/0/lists/0/path',
    ],
    [
      'a list condition on an unknown field',
      (m) => {
        m.routes[0].lists = [{ path: '/api/items/mine', where: { nope: 'a' }, name: 'Mine' }];
      },
      '/routes/0/lists/0/where/nope',
    ],
    [
      'grant on an unknown entity',
      (m) => {
        m.permissions[0].grants[0].subject = ['Item', 'Nope'];
      },
      '/permissions/0/grants/0/subject/1',
    ],
  ];
  for (const [name, mutate, pointer] of cases) {
    await t.test(name, async (t) => {
      const dir = copyManifests(t, MINIMAL);
      editManifest(dir, 'shop.json', mutate);
      await refused(t, dir, 'shop.json', pointer);
    });
  }
  await t.test("a flat route over a dependency's entity and a list over a condition load", async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      m.routes.push({ entity: 'Thing', path: '/api/shop/things', lists: [{ path: '/api/shop/things/named', where: { name: { $ne: null } }, name: 'Named' }] });
    });
    t.equal((await loadManifests(dir)).length, 2);
  });
});

t.test('grant conditions the query compiler cannot express stop the start', async (t) => {
  const withConditions = (conditions: unknown) => (m: Json) => {
    m.permissions[0].grants[0].conditions = conditions;
  };
  const at = '/permissions/0/grants/0/conditions';
  const cases: [string, unknown, string][] = [
    ['an unknown operator ($regex)', { code: { $regex: '^A' } }, `${at}/code/$regex`],
    ['an unknown top-level operator', { $where: 'true' }, `${at}/$where`],
    ['a field the subject lacks', { owner: '${user.id}' }, `${at}/owner`],
    ['$in with one value', { kind: { $in: 'a' } }, `${at}/kind/$in`],
    ['a comparison with a list', { price: { $gt: [1] } }, `${at}/price/$gt`],
    ['a nested object as a value', { kind: { a: 1 } }, `${at}/kind/a`],
    ['an empty $or', { $or: [] }, `${at}/$or`],
    ['a fault inside $and', { $and: [{ kind: 'a' }, { nope: 1 }] }, `${at}/$and/1/nope`],
    ['a fault inside $not', { $not: { code: { $like: 'x' } } }, `${at}/$not/code/$like`],
  ];
  for (const [name, conditions, pointer] of cases) {
    await t.test(name, async (t) => {
      const dir = copyManifests(t, MINIMAL);
      editManifest(dir, 'shop.json', withConditions(conditions));
      await refused(t, dir, 'shop.json', pointer);
    });
  }
  await t.test('every supported form loads', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(
      dir,
      'shop.json',
      withConditions({
        $or: [{ kind: 'a', price: { $gte: '1.00', $lt: 5 } }, { companyId: { $in: '${user.companyIds}' } }, { id: { $nin: ['x'] } }],
        $not: { code: null },
        thingId: { $ne: null, $eq: '${user.id}' },
        version: { $lte: 3 },
      }),
    );
    t.equal((await loadManifests(dir)).length, 2);
  });
});

t.test('dependencies', async (t) => {
  await t.test('a cycle names its modules', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'base.json', (m) => {
      m.dependsOn = ['shop'];
    });
    // base is visited first (file order), so shop's dependsOn closes the cycle
    await refused(t, dir, 'shop.json', '/dependsOn/0', ['base', 'shop']);
  });
  await t.test('a longer cycle names every module on it', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    write(dir, 'x.json', module('xray', { dependsOn: ['yank'] }));
    write(dir, 'y.json', module('yank', { dependsOn: ['base', 'zulu'] }));
    write(dir, 'z.json', module('zulu', { dependsOn: ['xray'] }));
    await refused(t, dir, 'z.json', '/dependsOn/0', ['xray', 'yank', 'zulu']);
  });
  await t.test('a module depending on itself', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      m.dependsOn = ['base', 'shop'];
    });
    await refused(t, dir, 'shop.json', '/dependsOn/1', ['shop']);
  });
  await t.test('a missing dependency', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      m.dependsOn = ['base', 'billing'];
    });
    await refused(t, dir, 'shop.json', '/dependsOn/1', ['billing']);
  });
  await t.test('a ref to an entity outside the module and its dependencies', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      m.dependsOn = [];
    });
    await refused(t, dir, 'shop.json', '/entities/0/fields/thingId/entity', ['Thing']);
  });
  await t.test('a ref to an entity of a transitive dependency is fine', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    write(dir, 'z-app.json', module('app', { dependsOn: ['shop'], entities: [{ name: 'Note', scope: 'tenant', fields: { thingId: { type: 'ref', entity: 'Thing' } } }] }));
    t.equal((await loadManifests(dir)).length, 3);
  });
  await t.test('a ref to an entity nobody declares', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      entityOf(m, 'Item').fields.thingId.entity = 'Gadget';
    });
    await refused(t, dir, 'shop.json', '/entities/0/fields/thingId/entity', ['Gadget']);
  });
});

t.test('duplicates across and within modules', async (t) => {
  await t.test('module id', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    write(dir, 'zz.json', module('base'));
    await refused(t, dir, 'zz.json', '/id', ['base']);
  });
  await t.test('entity name in another module', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    write(dir, 'zz.json', module('other', { entities: [{ name: 'Item', table: 'other_items', scope: 'tenant', fields: {} }] }));
    await refused(t, dir, 'zz.json', '/entities/0/name', ['Item']);
  });
  await t.test('entity name within a module', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      m.entities.push({ ...entityOf(m, 'Item'), table: 'shop_items2' });
    });
    await refused(t, dir, 'shop.json', '/entities/1/name', ['Item']);
  });
  await t.test('table name', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      m.entities.push({ name: 'Other', table: 'shop_items', scope: 'tenant', fields: {} });
    });
    await refused(t, dir, 'shop.json', '/entities/1/table', ['shop_items']);
  });
  await t.test('permission code in another module', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      m.permissions.push({ ...m.permissions[0], code: 'test:base:view' });
    });
    await refused(t, dir, 'shop.json', '/permissions/1/code', ['test:base:view']);
  });
  await t.test('permission code within a module', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      m.permissions.push({ ...m.permissions[0] });
    });
    await refused(t, dir, 'shop.json', '/permissions/1/code', ['test:shop:manage']);
  });
});

t.test('a file inside the project is named relative to it', async (t) => {
  const err = await loadManifests(join(FIXTURES, 'manifests', 'broken')).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof ManifestError);
  t.equal((err as ManifestError).file, join('test', 'fixtures', 'manifests', 'broken', 'broken.json'));
  t.equal((err as ManifestError).pointer, '/entities/0/fields/count/translatable');
});

t.test('the published JSON Schema is the generated one, and every shipped manifest passes it and the loader', async (t) => {
  t.equal(readFileSync(MANIFEST_SCHEMA_FILE, 'utf8'), manifestJsonSchema(), 'run `npm run manifest:schema` after changing core/manifest/format.ts');
  const schema = JSON.parse(readFileSync(MANIFEST_SCHEMA_FILE, 'utf8'));
  const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  const files = readdirSync(MANIFESTS).filter((n) => n.endsWith('.json') && !n.endsWith('.schema.json'));
  t.ok(files.length >= 2);
  for (const name of files) {
    const ok = validate(JSON.parse(readFileSync(join(MANIFESTS, name), 'utf8')));
    t.ok(ok, `${name}: ${JSON.stringify(validate.errors)}`);
  }
  const loaded = await loadManifests(MANIFESTS);
  t.same(loaded.map((l) => l.file).sort(), files.map((n) => join('manifests', n)).sort());
  t.equal(loaded[0].manifest.id, 'core', 'core has no dependencies and every module needs it');
});

t.test('secret and read-only fields, sub-lists, non-entity subjects', async (t) => {
  const faults: [string, (m: Json) => void, string][] = [
    [
      'a secret number',
      (m) => {
        entityOf(m, 'Item').fields.price.secret = true;
      },
      '/entities/0/fields/price/secret',
    ],
    [
      'a secret that is sorted',
      (m) => {
        entityOf(m, 'Item').fields.pin = { type: 'string', secret: true, sort: true };
      },
      '/entities/0/fields/pin/sort',
    ],
    [
      'a secret that is unique',
      (m) => {
        entityOf(m, 'Item').fields.pin = { type: 'string', secret: true, unique: true };
      },
      '/entities/0/fields/pin/unique',
    ],
    [
      'a translatable secret',
      (m) => {
        entityOf(m, 'Item').fields.pin = { type: 'string', secret: true, translatable: true };
      },
      '/entities/0/fields/pin/translatable',
    ],
    [
      'a secret with a default',
      (m) => {
        entityOf(m, 'Item').fields.pin = { type: 'string', secret: true, default: 'x' };
      },
      '/entities/0/fields/pin/default',
    ],
    [
      'a required read-only field without default',
      (m) => {
        entityOf(m, 'Item').fields.code.readOnly = true;
      },
      '/entities/0/fields/code/readOnly',
    ],
    [
      'an internal read-only field',
      (m) => {
        entityOf(m, 'Item').fields.flag = { type: 'boolean', internal: true, readOnly: true };
      },
      '/entities/0/fields/flag/readOnly',
    ],
    [
      'a sub-list by no ref field',
      (m) => {
        m.routes[0].lists = [{ path: '/api/kinds/:kind/items', by: 'kind' }];
      },
      '/routes/0/lists/0/by',
    ],
    [
      'a sub-list whose path lacks the field',
      (m) => {
        m.routes[0].lists = [{ path: '/api/things/:id/items', by: 'thingId' }];
      },
      '/routes/0/lists/0/path',
    ],
    [
      'a grant on an undeclared subject',
      (m) => {
        m.permissions[0].grants[0].subject = 'Report';
      },
      '/permissions/0/grants/0/subject',
    ],
  ];
  for (const [what, mutate, pointer] of faults) {
    t.test(what, async (t) => {
      const dir = copyManifests(t, MINIMAL);
      editManifest(dir, 'shop.json', mutate);
      await refused(t, dir, 'shop.json', pointer);
    });
  }
  t.test('the valid forms load', async (t) => {
    const dir = copyManifests(t, MINIMAL);
    editManifest(dir, 'shop.json', (m) => {
      entityOf(m, 'Item').fields.pin = { type: 'string', secret: true, maxLength: 100 };
      entityOf(m, 'Item').fields.flag = { type: 'boolean', readOnly: true, default: false };
      m.routes[0].lists = [{ path: '/api/things/:thingId/items', by: 'thingId' }];
      m.subjects = ['Report'];
      m.permissions[0].grants.push({ action: 'view', subject: 'Report' });
    });
    const shop = (await loadManifests(dir)).find((l) => l.manifest.id === 'shop')!.manifest;
    t.same(shop.subjects, ['Report']);
  });
});
