// The layering check (scripts/check-layers.ts): today's tree passes; an upward
// import, a cycle, a plugin past the SDK, a file without a layer and a stale or
// widened allow-list entry each fail; `import { type A }` counts as a load.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALLOWED, check, cycles, importsOf, layerOf, testLayoutProblems, type Edge } from '../../scripts/check-layers.ts';

const edge = (from: string, to: string, typeOnly = false, pkg = false): Edge => ({ from, to, typeOnly, line: 1, ...(pkg ? { package: true } : {}) });
const messages = (edges: Edge[], allowed = [] as typeof ALLOWED) => check(edges, allowed).map((p) => p.message);

t.test('the tree as it is passes, with every allow-list entry in use', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const run = spawnSync(process.execPath, ['scripts/check-layers.ts'], { cwd: new URL('../..', import.meta.url), encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /0 problem\(s\)/);
});

t.test('the layer table', async (t) => {
  t.equal(layerOf('core/errors.ts'), 0);
  t.equal(layerOf('core/manifest/loader.ts'), 1);
  t.equal(layerOf('core/http/request-context.ts'), 6, 'a file entry wins over its directory');
  t.equal(layerOf('core/http/problem.ts'), 7);
  t.equal(layerOf('plugins/crm/index.ts'), 8);
  t.equal(layerOf('core/new-thing.ts'), undefined);
});

t.test('imports are read with their kind', async (t) => {
  const edges = importsOf(
    'core/manifest/x.ts',
    [
      "import type { A } from '../http/problem.ts';",
      "import { type B } from '../http/openapi.ts';",
      "export * from '../errors.ts';",
      "export type { C } from '../config.ts';",
      "const m = await import('../logging.ts');",
      "let d: import('../i18n.ts').Lang;",
      "import { readFile } from 'node:fs/promises';",
      "import { Type } from 'typebox';",
      "import type { EntityManager } from '@mikro-orm/core/typings';",
      'const dynamic = await import(name);',
    ].join('\n'),
  );
  t.same(
    edges.map((e) => [e.to, e.typeOnly, e.package ?? false]),
    [
      ['core/http/problem.ts', true, false],
      ['core/http/openapi.ts', false, false], // Node loads openapi.ts for `import { type B }`
      ['core/errors.ts', false, false],
      ['core/config.ts', true, false],
      ['core/logging.ts', false, false],
      ['core/i18n.ts', true, false],
      ['typebox', false, true],
      ['@mikro-orm/core', true, true],
    ],
  );
  t.same(
    edges.map((e) => e.line),
    [1, 2, 3, 4, 5, 6, 8, 9],
  );
});

t.test('an upward import fails, also type-only; down and sideways pass', async (t) => {
  t.match(messages([edge('core/model/entity-model.ts', 'core/http/problem.ts', true)]), [/upward import: layer 2 \(model\) -> layer 7 \(http\)/]);
  t.same(messages([edge('core/http/problem.ts', 'core/errors.ts'), edge('core/auth/guards.ts', 'core/access/role-directory.ts')]), []);
});

t.test('a cycle fails, inside one layer and type-only too; one through an allow-listed import does not', async (t) => {
  const loop = [edge('core/auth/tokens.ts', 'core/auth/sessions.ts', true), edge('core/auth/sessions.ts', 'core/auth/tokens.ts')];
  t.match(messages(loop), [/import cycle: core\/auth\/sessions\.ts -> core\/auth\/tokens\.ts -> core\/auth\/sessions\.ts/]);
  t.same(messages(loop, [{ from: 'core/auth/tokens.ts', to: 'core/auth/sessions.ts', typeOnly: true, why: 'test' }]), []);
  t.same(cycles([edge('core/a.ts', 'core/a.ts')]), [['core/a.ts', 'core/a.ts']], 'a file importing itself');
});

t.test('plugins import core only through core/plugin-api.ts, and no MikroORM', async (t) => {
  t.same(messages([edge('plugins/crm/hooks.ts', 'core/plugin-api.ts'), edge('plugins/crm/hooks.ts', 'fastify', true, true)]), []);
  t.match(messages([edge('plugins/crm/hooks.ts', 'core/kernel.ts', true)]), [/past core\/plugin-api\.ts/]);
  t.match(messages([edge('plugins/crm/hooks.ts', 'core/errors.ts')]), [/past core\/plugin-api\.ts/]);
  t.match(messages([edge('plugins/crm/hooks.ts', '@mikro-orm/core', true, true)]), [/imports MikroORM/]);
});

t.test('a file without a layer, a missing file and a file outside core/ and plugins/ fail', async (t) => {
  const noLayer = (file: string) => `${file} has no layer: add it, or its directory, to LAYERS in scripts/check-layers.ts`;
  t.same(messages([edge('core/new-thing.ts', 'core/errors.ts'), edge('core/new-thing.ts', 'core/config.ts')]), [noLayer('core/new-thing.ts')], 'once, however many imports');
  t.same(
    check([], [], ['core/lonely.ts']).map((p) => p.message),
    [noLayer('core/lonely.ts')],
    'also a file without imports',
  );
  t.match(messages([edge('core/http/problem.ts', 'core/gone.ts')]), [/core\/gone\.ts does not exist/]);
  t.match(messages([edge('core/http/problem.ts', 'test/helper.ts')]), [/outside core\/ and plugins\//]);
});

t.test('the allow-list holds only imports that exist, as they are', async (t) => {
  const allowed = [{ from: 'core/auth/identity.ts', to: 'core/kernel.ts', typeOnly: true, why: 'test' }];
  t.same(messages([edge('core/auth/identity.ts', 'core/kernel.ts', true)], allowed), []);
  t.match(messages([edge('core/auth/identity.ts', 'core/kernel.ts')], allowed), [/allow-listed as type-only, now loaded at run time/]);
  t.match(messages([], allowed), [/matches no import any more: delete it/]);
  for (const a of ALLOWED) t.ok(a.why.length > 10, `${a.from} -> ${a.to} says why`);
});

t.test('test/core mirrors core/: a folder or top file naming nothing in core/ fails', async (t) => {
  t.same(testLayoutProblems(), [], 'the tree as it is');
  const root = mkdtempSync(join(tmpdir(), 'plinth-layout-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const dir of ['core/db', 'test/core/db', 'test/core/dbs']) mkdirSync(join(root, dir), { recursive: true });
  for (const file of ['core/i18n.ts', 'test/core/i18n.test.ts', 'test/core/lane-pool.test.ts', 'test/core/README.md']) writeFileSync(join(root, file), '');
  t.same(
    testLayoutProblems(root)
      .map((p) => p.message.split(':')[0])
      .sort(),
    ['test/core/dbs names no core/dbs', 'test/core/lane-pool.test.ts names no core/lane-pool.ts'],
  );
});
