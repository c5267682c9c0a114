// The scaffolder (scripts/scaffold.ts, scripts/scaffold/): the template stays in
// sync with the catalog module; bad input is refused with exit 2 and nothing
// written; --dry-run writes nothing; an existing module is never overwritten
// (exit 3); --add-entity appends without rewriting; and a generated module with
// two related entities works through the kernel and passes its own generated
// tests. Every run writes into a temporary project, never into manifests/ or test/.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseManifest } from '../../core/manifest/loader.ts';
import type { Manifest } from '../../core/manifest/format.ts';
import { run } from '../../scripts/scaffold/cli.ts';
import { member, scan } from '../../scripts/scaffold/json-edit.ts';
import { build, PASSWORD } from '../helper.ts';
import { ConsoleSession } from '../support/console-session.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = join(ROOT, 'test/fixtures/scaffold/catalog.spec.json');
const catalogText = await readFile(join(ROOT, 'manifests/catalog.json'), 'utf8');
const catalog = JSON.parse(catalogText) as Manifest;

interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * A throw-away project: manifests/ with core (and catalog) copied from the real
 * one; with `runnable`, also what `npm test` needs there (links to the real
 * node_modules, core, plugins, test/helper.ts) so generated tests run as in a clone.
 */
async function project(t: Teardown, opts: { catalog?: boolean; runnable?: boolean } = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'plinth-scaffold-test-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'manifests'));
  const manifests = ['core.json', 'manifest.schema.json', ...(opts.catalog ? ['catalog.json'] : [])];
  for (const f of manifests) await copyFile(join(ROOT, 'manifests', f), join(root, 'manifests', f));
  if (opts.runnable) {
    for (const f of ['node_modules', 'core', 'plugins']) await symlink(join(ROOT, f), join(root, f));
    for (const f of ['package.json', '.taprc', 'tsconfig.json']) await copyFile(join(ROOT, f), join(root, f));
    await mkdir(join(root, '.tap'));
    await symlink(join(ROOT, '.tap/plugins'), join(root, '.tap/plugins'));
    await mkdir(join(root, 'test'));
    await symlink(join(ROOT, 'test/helper.ts'), join(root, 'test/helper.ts'));
  }
  return root;
}

/** The CLI in-process: exit code and what it printed. */
async function scaffold(root: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run([...argv, '--root', root], { out: (l) => out.push(l), err: (l) => err.push(l) }, {});
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Every file under a directory with its contents, to show nothing changed. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      out[path.slice(dir.length)] = await readFile(path, 'utf8');
    }
  }
  return out;
}

const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as Manifest;

/** Flags saying what manifests/catalog.json says, field for field. */
const CATALOG_FLAGS = [
  'catalog',
  '--description',
  catalog.description!,
  '--entity',
  'Product',
  '--icon',
  'box',
  '--fields',
  [
    'sku:string(64)!#^~:pattern="^[A-Za-z0-9._-]+$"',
    'name:string(200):required:translatable:sort:search',
    'description:text(20000)*~',
    'price:decimal(12,2)!^=:min=0:currency=currency',
    'currency:string(3)!:pattern="^[A-Z]{3}$":default=EUR',
    'unit:enum(piece|kg|litre|metre|hour)=:default=piece',
    'stock:integer^:default=0:minimum=0',
    'categoryId:ref(Category):filter:onDelete=restrict',
    'isActive:boolean=:default=true',
    'availableFrom:date^=',
    'discontinuedAt:datetime:label="Discontinued at"',
    'attributes:json:widget=key-value',
  ].join(','),
  '--columns',
  'sku,name,price,isActive',
  '--default-sort=-createdAt',
  '--entity',
  'Category',
  '--icon',
  'folder',
  '--fields',
  'name:string(120)!*^~,description:text(4000)*',
  '--fields',
  'parentId:ref(Category)=:label="Parent category",isActive:boolean=:default=true',
];

t.test('template sync: scaffolding the catalog gives manifests/catalog.json', async (t) => {
  t.test('from the spec fixture', async (t) => {
    const root = await project(t);
    const res = await scaffold(root, '--spec', FIXTURE);
    t.equal(res.code, 0, res.err);
    const generated = await readFile(join(root, 'manifests/catalog.json'), 'utf8');
    t.same(JSON.parse(generated), catalog, 'the same manifest (a catalog change the template misses fails here)');
    t.same(Object.keys(JSON.parse(generated)), Object.keys(catalog), 'keys in the same order');
    t.same(parseManifest(generated, 'catalog.json'), catalog, 'and the kernel reads it the same');
    t.ok(existsSync(join(root, 'test/plugins/catalog/product.test.ts')) && existsSync(join(root, 'test/plugins/catalog/category.test.ts')));
  });

  t.test('from command-line flags', async (t) => {
    const root = await project(t);
    const res = await scaffold(root, ...CATALOG_FLAGS);
    t.equal(res.code, 0, res.err);
    t.same(await readJson(join(root, 'manifests/catalog.json')), catalog);
  });

  t.test('the spec fixture still says what the catalog says', async (t) => {
    const spec = JSON.parse(await readFile(FIXTURE, 'utf8'));
    t.same(spec.entities.map((e: { name: string }) => e.name).sort(), catalog.entities!.map((e) => e.name).sort(), 'the same entities');
    for (const e of spec.entities) {
      const entity = catalog.entities!.find((c) => c.name === e.name)!;
      t.same(Object.keys(e.fields), Object.keys(entity.fields), `${e.name}: the same fields, in order`);
    }
  });
});

t.test('bad input: exit 2, every problem named, nothing written', async (t) => {
  const root = await project(t, { catalog: true });
  const before = await snapshot(root);
  const cases: [string, string[], RegExp][] = [
    ['module id not kebab-case', ['Sales', '--entity', 'Order', '--fields', 'code:string'], /module id: "Sales" must be .*lower-case.*\(e\.g\. "sales"\)/],
    ['module id reserved', ['platform', '--entity', 'Thing', '--fields', 'code:string'], /module id: "platform" is reserved/],
    ['module installed', ['shop', '--entity', 'Product', '--fields', 'code:string'], /Product: entity "Product" is already declared by module "catalog"/],
    ['entity not PascalCase', ['shop', '--entity', 'sales_order', '--fields', 'code:string'], /sales_order: entity names are singular PascalCase.*"SalesOrder"/],
    ['entity a JS global', ['shop', '--entity', 'Object', '--fields', 'code:string'], /Object: "Object" is a JavaScript global/],
    ['entity without fields', ['shop', '--entity', 'Order'], /Order: has no fields/],
    ['no entity', ['shop'], /--entity: name at least one entity/],
    ['field not camelCase', ['shop', '--entity', 'Order', '--fields', 'Order_No:string'], /Order\.Order_No: field names are camelCase.*"orderNo"/],
    ['field id', ['shop', '--entity', 'Order', '--fields', 'id:string'], /Order\.id: reserved: the kernel gives every entity its UUIDv7 "id"/],
    ['field createdAt', ['shop', '--entity', 'Order', '--fields', 'createdAt:datetime'], /Order\.createdAt: reserved/],
    ['field version', ['shop', '--entity', 'Order', '--fields', 'version:integer'], /Order\.version: reserved/],
    ['field translations', ['shop', '--entity', 'Order', '--fields', 'translations:json'], /Order\.translations: reserved/],
    ['companyId of a company-scoped entity', ['shop', '--entity', 'Order', '--fields', 'companyId:ref(Company)'], /Order\.companyId: reserved: a company-scoped entity/],
    ['a list query parameter', ['shop', '--entity', 'Order', '--fields', 'sort:integer'], /Order\.sort: reserved: "sort" is a list query parameter/],
    ['an SQL reserved word', ['shop', '--entity', 'Order', '--fields', 'order:integer'], /Order\.order: "order" is a reserved word of SQL/],
    ['a JavaScript reserved word', ['shop', '--entity', 'Order', '--fields', 'class:string'], /Order\.class: "class" is a JavaScript reserved word/],
    ['Object.prototype', ['shop', '--entity', 'Order', '--fields', 'constructor:string'], /Order\.constructor: .*JavaScript reserved word or Object property/],
    ['a field twice', ['shop', '--entity', 'Order', '--fields', 'code:string,code:text'], /Order\.code: is given twice/],
    ['a kernel column', ['shop', '--entity', 'Order', '--fields', 'createdAT:datetime'], /Order\.createdAT: its column "created_at" is the kernel's/],
    ['unknown type', ['shop', '--entity', 'Order', '--fields', 'total:money'], /Order\.total: unknown type "money"; types: string, text, integer/],
    ['misspelt type', ['shop', '--entity', 'Order', '--fields', 'code:strng'], /Order\.code: unknown type "strng" \(did you mean "string"\?\)/],
    ['field without type', ['shop', '--entity', 'Order', '--fields', 'code'], /Order\.code: needs a type/],
    ['bad decimal arguments', ['shop', '--entity', 'Order', '--fields', 'total:decimal(a,b)'], /Order\.total: decimal\(a,b\): write decimal\(precision\)/],
    ["scale beyond precision (the kernel's rule)", ['shop', '--entity', 'Order', '--fields', 'total:decimal(4,6)'], /Order\.total( \((scale|precision)\))?: "scale".*cannot exceed "precision"/],
    ['enum without values', ['shop', '--entity', 'Order', '--fields', 'state:enum'], /Order\.state: an enum lists its values/],
    ['unknown ref target', ['shop', '--entity', 'Order', '--fields', 'categoryId:ref(Categroy)'], /Order\.categoryId: ref\(Categroy\): no entity "Categroy".*did you mean "Category"/],
    ['ref without Id suffix', ['shop', '--entity', 'Order', '--fields', 'category:ref(Category)'], /Order\.category: a ref field is named after its target with an "Id" suffix, e\.g\. "categoryId"/],
    ['a required ref to itself', ['shop', '--entity', 'Node', '--fields', 'parentId:ref(Node)!'], /Node: required refs form a cycle \(Node → Node\)/],
    ['unknown modifier', ['shop', '--entity', 'Order', '--fields', 'code:string:sortt'], /Order\.code: unknown modifier "sortt" \(did you mean "sort"\?\)/],
    ['default of the wrong type', ['shop', '--entity', 'Order', '--fields', 'qty:integer:default=many'], /Order\.qty: default=many: must be an integer/],
    ["a default outside the enum (the kernel's rule)", ['shop', '--entity', 'Order', '--fields', 'state:enum(a|b):default=c'], /Order\.state( \(default\))?: .*must be one of "values"/],
    ['unbalanced parenthesis', ['shop', '--entity', 'Order', '--fields', 'total:decimal(12,2'], /Order: unbalanced "\("/],
    ['--fields before --entity', ['shop', '--fields', 'code:string', '--entity', 'Order', '--fields', 'code:string'], /--fields: applies to an entity: put it after --entity <Name>/],
    ['an entity option before any --entity', ['shop', '--icon', 'box', '--entity', 'Order', '--fields', 'code:string'], /--icon: applies to an entity/],
    ['unknown option', ['shop', '--entitty', 'Order'], /--entitty: unknown option \(did you mean "--entity"\?\)/],
    ['bad prefix', ['shop', '--prefix', 'api', '--entity', 'Order', '--fields', 'code:string'], /--prefix: "api" must be a path/],
    ['a route another module serves', ['shop', '--entity', 'Goods', '--plural', 'Products', '--fields', 'code:string'], /Goods: the route \/api\/products is already served by module "catalog"/],
    ['an unknown dependency', ['shop', '--depends-on', 'crm', '--entity', 'Order', '--fields', 'code:string'], /--depends-on: module "crm" is not installed/],
    ['a pattern no sample fits', ['shop', '--entity', 'Order', '--fields', 'code:string(8)!:pattern="^Q[0-9]{7}$"'], /Order\.code: no sample value fits pattern .*:example=<value>/],
  ];
  for (const [what, argv, message] of cases) {
    const res = await scaffold(root, ...argv);
    t.equal(res.code, 2, `${what}: exit 2`);
    t.match(res.err, message, what);
    t.match(res.err, /^scaffold: nothing written/, `${what}: says nothing was written`);
  }
  t.test('every problem of one run is reported together', async (t) => {
    const res = await scaffold(root, 'shop', '--entity', 'order', '--fields', 'id:string,total:money', '--entity', 'Item', '--fields', 'class:string');
    t.equal(res.code, 2);
    t.match(res.err, /4 problems/);
    for (const m of [/order: entity names/, /order\.id: reserved/, /order\.total: unknown type/, /Item\.class:/]) t.match(res.err, m);
  });
  t.test('a bad spec file', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'plinth-scaffold-spec-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const specs: [string, string, string[], RegExp][] = [
      ['not JSON', '{ "module": ', [], /broken\.json: is not valid JSON/],
      ['an unknown key', '{ "module": "shop", "entitys": [] }', [], /broken\.json: \/ must NOT have additional properties "entitys"/],
      [
        'a field object the manifest would not take',
        '{ "module": "shop", "entities": [{ "name": "Order", "fields": { "code": { "type": "string", "colour": "red" } } }] }',
        [],
        /Order\.code: \/ must NOT have additional properties "colour" \(in broken\.json\)/,
      ],
      [
        'another module than the command',
        '{ "module": "shop", "entities": [{ "name": "Order", "fields": "code:string" }] }',
        ['depot'],
        /module: the command names module "depot", the spec file "shop"/,
      ],
      ['a missing file', '', [], /--spec: cannot read .*missing\.json: ENOENT/],
    ];
    for (const [what, text, argv, message] of specs) {
      const file = join(dir, text ? 'broken.json' : 'missing.json');
      if (text) await writeFile(file, text);
      const res = await scaffold(root, ...argv, '--spec', file);
      t.equal(res.code, 2, what);
      t.match(res.err, message, what);
    }
  });

  t.test('a pattern with an :example= is fine', async (t) => {
    const res = await scaffold(root, 'shop', '--dry-run', '--entity', 'Order', '--fields', 'code:string(8)!#:pattern="^Q[0-9]{7}$":example=Q0000001');
    t.equal(res.code, 0, res.err);
    t.match(res.out, /code: 'Q0000001'/);
    t.match(res.out, /code: 'Q0000002'/, 'a second, distinct sample for the unique field');
  });
  t.same(await snapshot(root), before, 'nothing was written');
});

t.test('the command itself: exit codes of a real process', async (t) => {
  const root = await project(t, { catalog: true });
  const cli = (...argv: string[]) =>
    new Promise<{ code: number | null; out: string; err: string }>((done) => {
      const child = spawn(process.execPath, [join(ROOT, 'scripts/scaffold.ts'), ...argv], { cwd: root });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      child.on('close', (code) => done({ code, out, err }));
    });
  const help = await cli('--help');
  t.equal(help.code, 0);
  t.match(help.out, /Fields: name:type\[\(args\)\]\[flags\]\[:modifier\.\.\.\]/);
  const bad = await cli('shop', '--entity', 'Order', '--fields', 'total:money');
  t.equal(bad.code, 2);
  t.match(bad.err, /Order\.total: unknown type "money"/);
  const exists = await cli('catalog', '--entity', 'Brand', '--fields', 'name:string!');
  t.equal(exists.code, 3);
  t.match(exists.err, /module "catalog": exists already \(manifests\/catalog\.json\).*--add-entity/);
  const none = await cli();
  t.equal(none.code, 2, 'no arguments: the help, exit 2');
});

t.test('--dry-run prints the files and writes nothing', async (t) => {
  const root = await project(t, { catalog: true });
  const before = await snapshot(root);
  const res = await scaffold(root, 'fleet', '--dry-run', '--entity', 'Vehicle', '--fields', 'plate:string(12)!#^~,seats:integer:min=1');
  t.equal(res.code, 0, res.err);
  t.match(res.out, /^Dry run: would write 2 files \(nothing written\)\n {2}create manifests\/fleet\.json\n {2}create test\/plugins\/fleet\/vehicle\.test\.ts/);
  const manifest = /--- manifests\/fleet\.json\n([\s\S]*?)\n\n--- /.exec(res.out)?.[1];
  t.ok(manifest, 'prints the manifest');
  const m = parseManifest(manifest!, 'fleet.json');
  t.same(
    m.permissions!.map((p) => p.code),
    ['erp:fleet:view', 'erp:fleet:manage'],
  );
  t.same(m.routes, [{ entity: 'Vehicle', path: '/api/vehicles' }]);
  t.match(res.out, /--- test\/plugins\/fleet\/vehicle\.test\.ts\n\/\/ Vehicle routes of module "fleet"/);
  t.same(await snapshot(root), before, 'nothing written');
});

t.test('an existing module is never overwritten', async (t) => {
  const root = await project(t, { catalog: true });
  const first = await scaffold(root, 'fleet', '--entity', 'Vehicle', '--fields', 'plate:string(12)!');
  t.equal(first.code, 0, first.err);
  const before = await snapshot(root);
  const again = await scaffold(root, 'fleet', '--entity', 'Truck', '--fields', 'plate:string(12)!');
  t.equal(again.code, 3);
  t.match(again.err, /module "fleet": exists already \(manifests\/fleet\.json\); nothing was written\. Add entities to it with --add-entity/);
  t.same(await snapshot(root), before, 'manifest and tests untouched');

  // A test file left behind (say, by a deleted module) is not overwritten either.
  await mkdir(join(root, 'test/plugins/depot'), { recursive: true });
  await writeFile(join(root, 'test/plugins/depot/bay.test.ts'), '// mine\n');
  const clash = await scaffold(root, 'depot', '--entity', 'Bay', '--fields', 'code:string(12)!');
  t.equal(clash.code, 3);
  t.match(clash.err, /test\/plugins\/depot\/bay\.test\.ts: exists already; the scaffolder never overwrites a file/);
  t.notOk(existsSync(join(root, 'manifests/depot.json')), 'and the manifest is not written alone');
  t.equal(await readFile(join(root, 'test/plugins/depot/bay.test.ts'), 'utf8'), '// mine\n');
});

t.test('--add-entity', async (t) => {
  t.test('appends to a scaffolded module without rewriting what is there', async (t) => {
    const root = await project(t, { catalog: true });
    const ok = await scaffold(root, 'fleet', '--entity', 'Depot', '--icon', 'home', '--fields', 'code:string(12)!#^~', '--entity', 'Vehicle', '--fields', 'plate:string(12)!#^~,depotId:ref(Depot)=');
    t.equal(ok.code, 0, ok.err);
    const file = join(root, 'manifests/fleet.json');
    // The developer edits: a field of their own, a description in their words, a changed test.
    const edited = (await readFile(file, 'utf8'))
      .replace(
        '"code": { "type": "string", "label": "Code", "required": true, "maxLength": 12, "unique": true, "sort": true, "search": true }',
        '"code": { "type": "string", "label": "Depot code", "required": true, "maxLength": 12, "unique": true, "sort": true, "search": true },\n        "capacity": { "type": "integer", "label": "Capacity" }',
      )
      .replace('"Read depots and vehicles"', '"See the fleet"');
    await writeFile(file, edited);
    const testFile = join(root, 'test/plugins/fleet/vehicle.test.ts');
    await writeFile(testFile, `${await readFile(testFile, 'utf8')}\n// my own test\n`);
    const tests = await snapshot(join(root, 'test'));
    const before = JSON.parse(edited) as Manifest;

    const res = await scaffold(root, 'fleet', '--add-entity', '--entity', 'Trip', '--icon', 'route', '--fields', 'vehicleId:ref(Vehicle)!=,startsAt:datetime!^,km:decimal(8,1)');
    t.equal(res.code, 0, res.err);
    t.match(res.out, /Added to module "fleet":\n {2}updated manifests\/fleet\.json\n {2}created test\/plugins\/fleet\/trip\.test\.ts/);
    t.match(res.out, /note: kept the description of erp:fleet:view/);
    const text = await readFile(file, 'utf8');
    const after = parseManifest(text, 'fleet.json');
    t.same(after.entities!.slice(0, 2), before.entities, 'existing entities unchanged, in their order');
    t.equal(after.entities![2].name, 'Trip');
    t.same(after.entities![2].fields.vehicleId, { type: 'ref', entity: 'Vehicle', label: 'Vehicle', required: true, onDelete: 'restrict', filter: true });
    t.same(after.routes, [...before.routes!, { entity: 'Trip', path: '/api/trips' }]);
    t.same(after.menu, [...before.menu!, { label: 'Trips', path: '/fleet/trips', entity: 'Trip', permission: 'erp:fleet:view', icon: 'route' }]);
    t.same(
      after.permissions!.map((p) => p.grants[0].subject),
      [
        ['Depot', 'Vehicle', 'Trip'],
        ['Depot', 'Vehicle', 'Trip'],
      ],
    );
    t.same(
      after.permissions!.map((p) => p.description),
      ['See the fleet', 'Create, change and delete depots, vehicles and trips'],
      "the developer's description kept, the generated one extended",
    );
    // Byte for byte: the old entities' text is still there, the new one comes after it.
    const oldEntities = member(scan(edited), 'entities')!;
    t.ok(text.includes(edited.slice(oldEntities.start, oldEntities.end - 1).trimEnd()), 'the entities text is kept as written');
    t.ok(text.startsWith(edited.slice(0, edited.indexOf('"See the fleet"'))), 'everything before is byte-identical');
    const nowTests = await snapshot(join(root, 'test'));
    t.same(Object.keys(nowTests).sort(), [...Object.keys(tests), '/plugins/fleet/trip.test.ts'].sort());
    for (const [path, contents] of Object.entries(tests)) t.equal(nowTests[path], contents, `${path} untouched`);
    t.match(nowTests['/plugins/fleet/trip.test.ts'], /const vehicle = await create\(tenant, '\/api\/vehicles', \{ plate: 'Plate 1' \}\);/);
  });

  t.test("follows the module's conventions: the catalog gains a Brand", async (t) => {
    const root = await project(t, { catalog: true });
    const res = await scaffold(root, 'catalog', '--add-entity', '--entity', 'Brand', '--icon', 'tag', '--fields', 'name:string(80)!#^~');
    t.equal(res.code, 0, res.err);
    const after = await readJson(join(root, 'manifests/catalog.json'));
    t.same(after.entities!.slice(0, 2), catalog.entities);
    t.same(
      after.permissions!.map((p) => [p.description, p.grants[0].subject]),
      [
        ['Read products, categories and brands', ['Product', 'Category', 'Brand']],
        ['Create, change and delete products, categories and brands', ['Product', 'Category', 'Brand']],
      ],
    );
    t.same(after.menu!.at(-1), { label: 'Brands', path: '/catalog/brands', entity: 'Brand', permission: 'erp:catalog:view', icon: 'tag' });
    t.same(after.routes!.at(-1), { entity: 'Brand', path: '/api/brands' });
  });

  t.test('a hand-written manifest: one-line arrays, string subjects, no menu', async (t) => {
    const root = await project(t);
    const file = join(root, 'manifests/tools.json');
    const handWritten = `{
  "id": "tools", "name": "Tools", "version": "1.0.0",
  "permissions": [
    { "code": "erp:tools:view", "description": "Read tools", "grants": [{ "action": "read", "subject": "Tool" }] },
    { "code": "erp:tools:manage", "description": "Look after tools", "grants": [
      { "action": ["read", "create", "update", "delete"], "subject": "Tool" },
      { "action": "delete", "subject": "Tool", "inverted": true, "conditions": { "locked": true } }] }
  ],
  "entities": [{ "name": "Tool", "scope": "company", "fields": { "tag": { "type": "string", "required": true }, "locked": { "type": "boolean" } } }],
  "routes": [{ "entity": "Tool", "path": "/api/tools" }]
}
`;
    await writeFile(file, handWritten);
    const res = await scaffold(root, 'tools', '--add-entity', '--entity', 'Kit', '--fields', 'name:string(80)!,toolId:ref(Tool)=');
    t.equal(res.code, 0, res.err);
    const text = await readFile(file, 'utf8');
    const m = parseManifest(text, 'tools.json');
    t.same(
      m.permissions!.map((p) => p.description),
      ['Read tools and kits', 'Look after tools'],
    );
    t.same(
      m.permissions!.flatMap((p) => p.grants.map((g) => g.subject)),
      [['Tool', 'Kit'], ['Tool', 'Kit'], 'Tool'],
      "plain grants widen; a conditional one stays the developer's",
    );
    t.match(text, '"routes": [{ "entity": "Tool", "path": "/api/tools" }, { "entity": "Kit", "path": "/api/kits" }]', 'a one-line array stays one line');
    t.same(m.menu, [{ label: 'Kits', path: '/tools/kits', entity: 'Kit', permission: 'erp:tools:view' }], 'a menu where there was none');
    t.same(
      m.entities!.map((e) => e.name),
      ['Tool', 'Kit'],
    );
    t.ok(text.startsWith(handWritten.slice(0, handWritten.indexOf('"Read tools"'))));
    t.ok(existsSync(join(root, 'test/plugins/tools/kit.test.ts')));
  });

  t.test('refuses what it cannot add', async (t) => {
    const root = await project(t, { catalog: true });
    const before = await snapshot(root);
    const twice = await scaffold(root, 'catalog', '--add-entity', '--entity', 'Category', '--fields', 'name:string!');
    t.equal(twice.code, 2);
    t.match(twice.err, /Category: module "catalog" already has an entity "Category"/);
    const missing = await scaffold(root, 'depot', '--add-entity', '--entity', 'Bay', '--fields', 'code:string!');
    t.equal(missing.code, 2);
    t.match(missing.err, /module "depot": is not installed in manifests; scaffold it without --add-entity/);
    t.same(await snapshot(root), before);
  });
});

/** Environment for a nested `npm test`: the outer tap's and npm's variables would steer it. */
function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS|npm_|NODE_OPTIONS$)/.test(k)));
}

function exec(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd, env: childEnv() });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('close', (code) => done({ code, output }));
  });
}

t.test('end to end: a module with two related entities', async (t) => {
  const root = await project(t, { catalog: true, runnable: true });
  const res = await scaffold(
    root,
    'assets',
    '--entity',
    'Location',
    '--icon',
    'map',
    '--fields',
    'code:string(20)!#^~,name:string(120)!*^~,city:string(80)=,isActive:boolean=:default=true',
    '--entity',
    'Asset',
    '--icon',
    'box',
    '--fields',
    'tag:string(40)!#^~:pattern="^[A-Z0-9-]+$",name:string(200)!*^~,value:decimal(12,2)^=:min=0,status:enum(active|repair|retired)=:default=active,locationId:ref(Location)!=,purchasedOn:date^=',
  );
  t.equal(res.code, 0, res.err);
  const testFiles = ['test/plugins/assets/location.test.ts', 'test/plugins/assets/asset.test.ts'];
  t.test('its test files are formatted as CI checks', async (t) => {
    const prettier = await import('prettier');
    for (const f of testFiles) {
      const path = join(root, f);
      t.ok(await prettier.check(await readFile(path, 'utf8'), { ...(await prettier.resolveConfig(join(ROOT, 'prettier.config.js'))), filepath: path }), f);
    }
  });

  t.test('its routes work through the generated OpenAPI document', async (t) => {
    const ctx = await build(t, { config: { manifestsDir: join(root, 'manifests') } });
    const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
    const ops = new Map<string, { method: string; path: string; description: string }>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string; description?: string }>>)) {
      for (const [method, op] of Object.entries(item)) if (op.operationId) ops.set(op.operationId, { method: method.toUpperCase(), path, description: op.description ?? '' });
    }
    const call = (token: string, operationId: string, opts: { id?: string; query?: string; payload?: object } = {}) => {
      const op = ops.get(operationId);
      if (!op) throw new Error(`no operation ${operationId} in the OpenAPI document`);
      const url = op.path.replace('{id}', opts.id ?? '') + (opts.query ? `?${opts.query}` : '');
      return ctx.as(token, { method: op.method as 'GET', url, ...(opts.payload ? { payload: opts.payload } : {}) });
    };
    t.same([...ops.keys()].filter((id) => id.startsWith('assets')).sort(), [
      'assetsBulkAssets',
      'assetsBulkLocations',
      'assetsCreateAsset',
      'assetsCreateLocation',
      'assetsDeleteAsset',
      'assetsDeleteLocation',
      'assetsGetAsset',
      'assetsGetLocation',
      'assetsListAssets',
      'assetsListLocations',
      'assetsReplaceAsset',
      'assetsReplaceLocation',
      'assetsUpdateAsset',
      'assetsUpdateLocation',
    ]);
    t.match(ops.get('assetsCreateAsset')!.description, 'erp:assets:manage');
    t.match(ops.get('assetsListAssets')!.description, 'erp:assets:view');

    const tenant = await ctx.tenant();
    const admin = tenant.adminToken;
    const location = await call(admin, 'assetsCreateLocation', { payload: { code: 'HQ', name: 'Head office', city: 'Berlin' } });
    t.equal(location.statusCode, 201, location.body);
    const locationId = location.json().id;
    const drill = await call(admin, 'assetsCreateAsset', { payload: { tag: 'A-1', name: 'Drill', value: '99.90', locationId } });
    t.equal(drill.statusCode, 201, drill.body);
    t.match(drill.json(), { status: 'active', value: '99.90', locationId, companyId: tenant.companyId });
    const saw = await call(admin, 'assetsCreateAsset', { payload: { tag: 'A-2', name: 'Saw', status: 'repair', locationId } });
    t.equal(saw.statusCode, 201, saw.body);

    const tags = async (query: string) => (await call(admin, 'assetsListAssets', { query })).json().items.map((a: { tag: string }) => a.tag);
    t.same(await tags('status=repair'), ['A-2'], 'filter by an enum');
    t.same(await tags(`locationId=${locationId}&sort=tag`), ['A-1', 'A-2'], 'filter by the reference');
    t.same(await tags('search=dri'), ['A-1'], 'search');
    t.same(await tags('valueFrom=50'), ['A-1'], 'a range filter');
    const badFilter = await call(admin, 'assetsListAssets', { query: 'colour=red' });
    t.equal(badFilter.statusCode, 400, 'an undeclared filter');

    const read = await call(admin, 'assetsGetAsset', { id: drill.json().id });
    t.equal(read.statusCode, 200);
    t.equal(read.json().name, 'Drill');
    const patched = await call(admin, 'assetsUpdateAsset', { id: drill.json().id, payload: { status: 'retired' } });
    t.equal(patched.statusCode, 200, patched.body);
    t.equal(patched.json().version, 2);
    const replaced = await call(admin, 'assetsReplaceAsset', { id: drill.json().id, payload: { tag: 'A-1', name: 'Drill 2', value: null, status: 'active', locationId, purchasedOn: '2026-05-01' } });
    t.equal(replaced.statusCode, 200, replaced.body);
    t.match(replaced.json(), { name: 'Drill 2', value: null, purchasedOn: '2026-05-01', version: 3 });
    const missing = await call(admin, 'assetsCreateAsset', { payload: { tag: 'A-3', name: 'No place' } });
    t.equal(missing.statusCode, 400, 'the required reference');
    t.match(missing.json(), { code: 'VALIDATION_FAILED', errors: [{ path: '/locationId' }] });

    const viewer = await ctx.user(tenant, { codes: ['erp:assets:view'] });
    t.equal((await call(viewer.token, 'assetsListAssets')).json().total, 2, 'the view code reads');
    const denied = await call(viewer.token, 'assetsCreateAsset', { payload: { tag: 'A-9', name: 'x', locationId } });
    t.equal(denied.statusCode, 403);
    t.equal(denied.json().code, 'FORBIDDEN');
    const stranger = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
    t.equal((await call(stranger.token, 'assetsListAssets')).statusCode, 403, "another module's code does not read assets");

    const other = await ctx.tenant();
    t.equal((await call(other.adminToken, 'assetsListAssets')).json().total, 0, 'another tenant lists nothing');
    const foreign = await call(other.adminToken, 'assetsGetAsset', { id: saw.json().id });
    t.equal(foreign.statusCode, 404, 'another tenant reads nothing');
    t.equal(foreign.json().code, 'NOT_FOUND');

    const referenced = await call(admin, 'assetsDeleteLocation', { id: locationId });
    t.equal(referenced.statusCode, 409, 'a referenced location cannot go (onDelete restrict)');
    for (const a of [drill, saw]) t.equal((await call(admin, 'assetsDeleteAsset', { id: a.json().id })).statusCode, 204);
    t.equal((await call(admin, 'assetsDeleteLocation', { id: locationId })).statusCode, 204);
    t.equal((await call(admin, 'assetsGetLocation', { id: locationId })).statusCode, 404);
  });

  t.test('its record pages list related rows with no page code of its own', async (t) => {
    const ctx = await build(t, { config: { manifestsDir: join(root, 'manifests') } });
    const tenant = await ctx.tenant();
    const post = async (url: string, payload: object) => (await ctx.as(tenant.adminToken, { method: 'POST', url, payload })).json();
    const meta = (await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/meta' })).json();
    const entity = meta.entities.find((e: { name: string }) => e.name === 'Location');
    const assets = meta.entities.find((e: { name: string }) => e.name === 'Asset');
    const location = await post(entity.path, { code: 'HQ-1', name: 'Head office' });
    await post(assets.path, { tag: 'A-77', name: 'Forklift', locationId: location.id });
    t.match(entity.related, [{ entity: 'Asset', field: 'locationId' }], "the location's assets, derived from the ref");
    const s = new ConsoleSession(ctx.app);
    t.equal((await s.login(tenant.id, tenant.adminEmail, PASSWORD)).statusCode, 303);
    const path = meta.menu.find((m: { entity: string | null }) => m.entity === 'Location').path;
    const page = await s.get(`${path}/${location.id}`);
    t.equal(page.statusCode, 200);
    t.match(page.body, /<section class="related" id="related-Asset-locationId"[\s\S]*?Forklift/, 'the page lists it');
    t.match(page.body, new RegExp(`/new\\?locationId&#x3D;${location.id}`), 'with a New pre-filled');
  });

  t.test('its generated tests type-check and pass under npm test', async (t) => {
    const tsc = await exec(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', 'tsconfig.json'], root);
    t.same(
      tsc.output.split('\n').filter((l) => l.includes('test/plugins/assets/')),
      [],
      'no type errors in the generated tests',
    );
    const tests = await exec('npm', ['test', '--', ...testFiles], root);
    t.equal(tests.code, 0, tests.code === 0 ? 'npm test passed' : tests.output);
    const summary = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(tests.output);
    t.ok(summary && Number(summary[1]) > 50 && summary[3] === undefined, `tap summary: ${summary?.[0]}`);
    t.match(tests.output, /ok \d+ - test\/plugins\/assets\/location\.test\.ts/);
    t.match(tests.output, /ok \d+ - test\/plugins\/assets\/asset\.test\.ts/);
  });
});
