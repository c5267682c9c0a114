// npm run check:layers: the layering of core/ and plugins/ (issue 10, item 7).
// Reads every import of core/**/*.ts and plugins/**/*.ts with the TypeScript
// compiler API (type-only imports, re-exports and import() included) and fails on
//   (a) an import cycle,
//   (b) an import from a lower layer to a higher one (LAYERS below),
//   (c) a plugin importing a core file other than core/plugin-api.ts (the module
//       SDK; core/kernel.ts included) or any @mikro-orm/* package,
// unless the import is one of today's, listed with its reason in ALLOWED. An
// allow-listed import may close cycles; every cycle that does not run through an
// allow-listed import fails, and so does an entry whose import is gone (delete it).
//
// `import { type A } from './a.ts'` counts as a value import: with
// verbatimModuleSyntax Node still loads a.ts. Only `import type` / `export type`
// and `import('…')` in a type position are type-only.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// TypeScript 6.0's compiler API: TypeScript 7, which type-checks the project, has no JavaScript API (see tools/ts-api)
import ts from 'plinth-ts-api/typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The one table of layers: a file, or a directory ending in '/'; the longest match wins. An import may go down or stay in its layer. */
export const LAYERS: Record<string, number> = {
  // 0 constants and leaf helpers: they import no other core file
  'core/errors.ts': 0,
  'core/decimal.ts': 0,
  'core/ids.ts': 0,
  'core/config.ts': 0,
  'core/logging.ts': 0,
  'core/i18n.ts': 0,
  'core/secrets.ts': 0,
  'core/outbound-http.ts': 0,
  'core/calendar.ts': 0,
  'core/clock.ts': 0,
  // 1 the manifest: its TypeBox declaration, loading and checking
  'core/manifest/': 1,
  // 2 the entity model built from the manifests (MikroORM entity schemas, field models)
  'core/model/': 2,
  // 3 database plumbing: pools, the migrator, LISTEN/NOTIFY, health; it needs only config and the manifest's types
  'core/db/': 3,
  // uploaded files: the file store and reading a multipart upload; they need only config and errors
  'core/files/': 3,
  // 4 who may do what: CASL abilities, roles, and the identities, sessions and tokens behind them
  'core/access/': 4,
  'core/auth/': 4,
  // 5 data: the scope compiler and SQL statements (data/), generated CRUD over the model,
  // and the tenants' registry, provisioning and migration
  'core/crud/': 5,
  'core/data/': 5,
  'core/tenancy/': 5,
  // 6 context: the module context and its services, the kernel that wires layers 0-5, the module SDK,
  // a request's resolved context
  'core/context/': 6,
  // the outbox's dispatcher, subscribers, module jobs and the job runner under them (pg-boss)
  'core/events/': 6,
  'core/kernel.ts': 6,
  'core/plugin-api.ts': 6,
  'core/http/request-context.ts': 6,
  // 7 HTTP: routes, serialisation, the Fastify app; demo-data.ts drives the CRUD service like a client does
  'core/http/': 7,
  'core/app.ts': 7,
  // the web console: a client of the HTTP API (app.inject), wired into the app beside it
  'core/console/': 7,
  'core/demo-data.ts': 7,
  // 8 modules' plugins; rule (c) narrows what they may import further
  'plugins/': 8,
};
const LAYER_NAMES = ['leaf', 'manifest', 'model', 'db', 'access', 'data', 'context', 'http', 'plugins'];

interface Allowed {
  from: string;
  /** a repository file, or an npm package */
  to: string;
  /** the import must stay type-only; a value import (a load at run time) fails */
  typeOnly?: boolean;
  why: string;
}

// Today's violations, each with its reason. Never add one to get a change through:
// fix the import. Delete an entry when its import goes (the check says when).
export const ALLOWED: Allowed[] = [];

/** One import statement: to is a repository file ('core/x.ts') or, when package is set, an npm package's name. */
export interface Edge {
  from: string;
  to: string;
  package?: boolean;
  typeOnly: boolean;
  line: number;
}
export interface Problem {
  edge?: Edge;
  message: string;
}

const sourceFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    return e.isDirectory() ? sourceFiles(path) : /\.[cm]?tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** What a specifier names: a repository file, an npm package, or nothing to check (node: built-ins) */
const target = (file: string, spec: string): { to: string; package?: boolean } | undefined => {
  if (spec.startsWith('.') || spec.startsWith('/')) {
    const path = resolve(ROOT, dirname(file), spec);
    const found = [path, path.replace(/\.js$/, '.ts'), `${path}.ts`, join(path, 'index.ts')].find(isFile);
    return {
      to: relative(ROOT, found ?? path)
        .split('\\')
        .join('/'),
    };
  }
  if (spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  return { to: spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0], package: true };
};

/** Every import of one file: import/export declarations, import x = require(), import() calls and import('…') types. */
export function importsOf(file: string, text = readFileSync(join(ROOT, file), 'utf8')): Edge[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edges: Edge[] = [];
  const add = (node: ts.Node, spec: ts.Node | undefined, typeOnly: boolean) => {
    if (!spec || !ts.isStringLiteralLike(spec)) return; // import(variable): not a static edge
    const named = target(file, spec.text);
    if (named) edges.push({ from: file, ...named, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node, node.moduleSpecifier, node.importClause?.phaseModifier === ts.SyntaxKind.TypeKeyword);
    else if (ts.isExportDeclaration(node)) add(node, node.moduleSpecifier, node.isTypeOnly);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0], false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal, true);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

export const layerOf = (file: string): number | undefined => {
  const key = Object.keys(LAYERS)
    .filter((k) => (k.endsWith('/') ? file.startsWith(k) : file === k))
    .sort((a, b) => b.length - a.length)[0];
  return key === undefined ? undefined : LAYERS[key];
};

const isInternal = (e: Edge) => !e.package && (e.to.startsWith('core/') || e.to.startsWith('plugins/'));
const show = (e: Edge) => `${e.from}:${e.line} -> ${e.to}${e.typeOnly ? ' (type-only)' : ''}`;

/** The problems of an import graph: one Edge per import statement (a file may import another twice); files: every file scanned. */
export function check(edges: Edge[], allowed: Allowed[] = ALLOWED, files: string[] = []): Problem[] {
  const problems: Problem[] = [];
  const unlayered = new Set(files.filter((f) => layerOf(f) === undefined));
  const allowance = (e: Edge) => allowed.find((a) => a.from === e.from && a.to === e.to);
  const used = new Set<Allowed>();
  const bad: Edge[] = [];
  for (const e of edges) {
    const from = layerOf(e.from);
    const why: string[] = [];
    if (from === undefined) unlayered.add(e.from);
    if (e.from.startsWith('plugins/')) {
      if (e.to.startsWith('@mikro-orm/')) why.push('a plugin imports MikroORM: use what core/plugin-api.ts offers');
      else if (e.to.startsWith('core/') && e.to !== 'core/plugin-api.ts') why.push('a plugin imports core past core/plugin-api.ts, the module SDK');
    }
    if (isInternal(e)) {
      const to = layerOf(e.to);
      if (!isFile(join(ROOT, e.to))) why.push(`${e.to} does not exist`);
      else if (to === undefined) unlayered.add(e.to);
      else if (from !== undefined && to > from) why.push(`upward import: layer ${from} (${LAYER_NAMES[from]}) -> layer ${to} (${LAYER_NAMES[to]})`);
    } else if (!e.package) {
      why.push(`${e.to} lies outside core/ and plugins/`);
    }
    const allow = allowance(e);
    if (allow) {
      used.add(allow);
      if (allow.typeOnly && !e.typeOnly) problems.push({ edge: e, message: `${show(e)}: allow-listed as type-only, now loaded at run time (use import type)` });
    } else {
      for (const w of why) problems.push({ edge: e, message: `${show(e)}: ${w}` });
      if (isInternal(e)) bad.push(e);
    }
  }
  problems.unshift(...[...unlayered].sort().map((file) => ({ message: `${file} has no layer: add it, or its directory, to LAYERS in scripts/check-layers.ts` })));
  for (const a of allowed) if (!used.has(a)) problems.push({ message: `allow-list entry ${a.from} -> ${a.to} matches no import any more: delete it from ALLOWED in scripts/check-layers.ts` });
  for (const cycle of cycles(bad)) problems.push({ message: `import cycle: ${cycle.join(' -> ')}` });
  return problems;
}

/** One cycle per strongly connected component (Tarjan) of the graph, as a file path that ends where it starts. */
export function cycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...new Set([...(next.get(e.from) ?? []), e.to])]);
  const index = new Map<string, number>(),
    low = new Map<string, number>(),
    stack: string[] = [],
    onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const strong = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || next.get(v)?.includes(v)) components.push(component);
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) strong(v);
  // a shortest way back to the component's first file (breadth-first inside the component)
  return components.map((component) => {
    const inside = new Set(component),
      start = [...component].sort()[0];
    const back = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      for (const w of next.get(queue[i]) ?? []) {
        if (w === start) {
          const path = [start];
          for (let v: string | undefined = queue[i]; v !== undefined && v !== start; v = back.get(v)) path.splice(1, 0, v);
          return [...path, start];
        }
        if (inside.has(w) && !back.has(w)) {
          back.set(w, queue[i]);
          queue.push(w);
        }
      }
    }
    return [...component, component[0]];
  });
}

/**
 * test/core mirrors core: each of its folders names a folder of core/, and a test
 * file at its top names a file at core's top (i18n.test.ts tests core/i18n.ts), so
 * the tests of a source file are where its path says.
 */
export function testLayoutProblems(root = ROOT): { message: string }[] {
  const tests = join(root, 'test/core');
  return readdirSync(tests, { withFileTypes: true }).flatMap((entry) => {
    if (!entry.isDirectory() && !entry.name.endsWith('.test.ts')) return [];
    const source = entry.isDirectory() ? `core/${entry.name}` : `core/${entry.name.replace(/\.test\.ts$/, '.ts')}`;
    return existsSync(join(root, source)) ? [] : [{ message: `test/core/${entry.name} names no ${source}: test/core mirrors core/ (move it beside the tests of what it tests)` }];
  });
}

if (import.meta.main) {
  const files = [...sourceFiles('core'), ...sourceFiles('plugins')].sort();
  const edges = files.flatMap((f) => importsOf(f));
  const problems = [...check(edges, ALLOWED, files), ...testLayoutProblems()];
  for (const p of problems) console.error(p.message);
  const internal = edges.filter(isInternal).length;
  console.log(`check:layers: ${files.length} files, ${internal} imports between them and ${edges.length - internal} of packages; ${ALLOWED.length} allow-listed; ${problems.length} problem(s)`);
  process.exitCode = problems.length ? 1 : 0;
}
