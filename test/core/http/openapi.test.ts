// The published OpenAPI document: valid 3.1, lint-clean, consistent with the
// kernel's conventions, and good enough to generate a working typed client.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS from 'openapi-typescript';
import { ERRORS } from '../../../core/errors.ts';
import { build, PASSWORD } from '../../helper.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const KERNEL_AREAS = ['auth', 'platform', 'health', 'jobs', 'meta'];

interface Operation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}
interface Doc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }>; securitySchemes: Record<string, unknown> };
}

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );

t.test('OpenAPI document', async (t) => {
  const ctx = await build(t);
  const res = await ctx.app.inject({ method: 'GET', url: '/api-docs/json' });
  t.equal(res.statusCode, 200);
  const doc = res.json() as Doc;
  const source = res.body;
  const ops = operations(doc);
  const modules = ctx.kernel.modules.map((m) => m.manifest.id.replace(/-./g, (s) => s[1].toUpperCase()));

  // swagger-parser checks the structure against the OAS 3.1 schema and resolves
  // every $ref; semantic rules (path parameters, schema keywords) are redocly's.
  t.test('is a valid OpenAPI 3.1 document', async (t) => {
    t.equal(doc.openapi, '3.1.0');
    const api = await SwaggerParser.validate(structuredClone(doc) as never);
    t.equal((api as { openapi?: string }).openapi, '3.1.0');
  });

  t.test('passes the redocly recommended ruleset without an error or a warning', async (t) => {
    const config = await createConfig({ extends: ['recommended'] });
    const lint = (src: string) => lintFromString({ source: src, absoluteRef: 'plinth-openapi.json', config });
    const problems = await lint(source);
    const show = (p: (typeof problems)[number]) => `${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`;
    t.same(problems.map(show), [], 'no lint errors or warnings');
    // the ruleset is really loaded: a broken copy fails it
    const broken = structuredClone(doc);
    broken.paths['/api/products'].get.operationId = broken.paths['/api/products'].post.operationId;
    const found = await lint(JSON.stringify(broken));
    t.ok(
      found.some((p) => p.severity === 'error' && p.ruleId === 'operation-operationId-unique'),
      'a duplicate operationId is an error',
    );
    // and a warning counts: an example its schema refuses is one
    const badExample = structuredClone(doc) as unknown as { components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> } };
    badExample.components.schemas.CatalogProductCreate.properties.price.examples = ['12.505'];
    t.ok(
      (await lint(JSON.stringify(badExample))).some((p) => p.severity === 'warn' && p.ruleId === 'no-invalid-schema-examples'),
      'an invalid example is a warning',
    );
  });

  t.test('components are named from $id, never def-N or SchemaN', async (t) => {
    const names = Object.keys(doc.components.schemas);
    t.ok(names.includes('CatalogProduct') && names.includes('Problem'));
    t.same(
      names.filter((n) => /^(def-\d+|Schema\d+)$/.test(n) || !/^[A-Z][A-Za-z0-9]*$/.test(n)),
      [],
    );
    t.notMatch(source, /#\/components\/schemas\/(def-\d+|Schema\d+)"/);
  });

  t.test('operationIds are unique, camelCase and prefixed with their module', async (t) => {
    const ids = ops.map((o) => o.op.operationId);
    t.same(
      ops.filter((o) => !o.op.operationId).map((o) => `${o.method} ${o.path}`),
      [],
      'every operation has an id',
    );
    t.same(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'no duplicates',
    );
    const prefixes = [...modules, ...KERNEL_AREAS];
    t.same(
      ids.filter((id) => !/^[a-z][a-zA-Z0-9]*$/.test(id!) || !prefixes.some((p) => new RegExp(`^${p}[A-Z]`).test(id!))),
      [],
      'camelCase, module-prefixed',
    );
    const catalog = Object.fromEntries(ops.filter((o) => /^\/api\/(products|categories)/.test(o.path)).map((o) => [`${o.method} ${o.path}`, o.op.operationId]));
    t.same(catalog, {
      'get /api/products': 'catalogListProducts',
      'post /api/products': 'catalogCreateProduct',
      'get /api/products/{id}': 'catalogGetProduct',
      'put /api/products/{id}': 'catalogReplaceProduct',
      'patch /api/products/{id}': 'catalogUpdateProduct',
      'delete /api/products/{id}': 'catalogDeleteProduct',
      'post /api/products/bulk': 'catalogBulkProducts',
      'get /api/categories': 'catalogListCategories',
      'post /api/categories': 'catalogCreateCategory',
      'get /api/categories/{id}': 'catalogGetCategory',
      'put /api/categories/{id}': 'catalogReplaceCategory',
      'patch /api/categories/{id}': 'catalogUpdateCategory',
      'delete /api/categories/{id}': 'catalogDeleteCategory',
      'post /api/categories/bulk': 'catalogBulkCategories',
    });
  });

  t.test('every operation states its security, public ones an explicit []', async (t) => {
    t.same(
      ops.filter((o) => !Array.isArray(o.op.security)).map((o) => o.op.operationId),
      [],
      'security on every operation',
    );
    const schemes = Object.keys(doc.components.securitySchemes);
    t.same(
      ops.flatMap((o) => o.op.security!.flatMap(Object.keys)).filter((s) => !schemes.includes(s)),
      [],
      'only declared schemes',
    );
    t.same(
      ops
        .filter((o) => o.op.security!.length === 0)
        .map((o) => o.op.operationId)
        .sort(),
      ['authLogin', 'authRefresh', 'healthCheckLiveness', 'healthCheckReadiness'],
    );
  });

  t.test('every error response names its codes, each of its own status', async (t) => {
    t.same(doc.components.schemas.Problem.properties?.code.enum, Object.keys(ERRORS), 'Problem.code lists every code');
    const bad = ops.flatMap((o) =>
      Object.entries(o.op.responses)
        .filter(([s]) => Number(s) >= 400)
        .flatMap(([s, r]) => {
          const codes = [...((r as { description?: string }).description ?? '').matchAll(/\(([A-Z_]+)\)/g)].map((m) => m[1]);
          if (!codes.length) return [`${o.op.operationId} ${s} names no code`];
          return codes.filter((c) => ERRORS[c as keyof typeof ERRORS]?.[0] !== Number(s)).map((c) => `${o.op.operationId} ${s} ${c}`);
        }),
    );
    t.same(bad, []);
  });

  t.test('error responses are problem details; body routes declare 400, 413 and 415', async (t) => {
    const problemRef = '#/components/schemas/Problem';
    const bad = ops.flatMap((o) =>
      Object.entries(o.op.responses)
        .filter(([s]) => Number(s) >= 400)
        .filter(([, r]) => r.content?.['application/problem+json']?.schema?.$ref !== problemRef)
        .map(([s]) => `${o.op.operationId} ${s}`),
    );
    t.same(bad, [], 'every 4xx/5xx is application/problem+json with the Problem schema');
    const withBody = ops.filter((o) => o.op.requestBody);
    t.ok(withBody.length >= 8);
    t.same(
      withBody.filter((o) => !['400', '413', '415'].every((s) => s in o.op.responses)).map((o) => o.op.operationId),
      [],
    );
  });

  t.test('/api-docs serves the interactive UI', async (t) => {
    const ui = await ctx.app.inject({ method: 'GET', url: '/api-docs' });
    t.equal(ui.statusCode, 200);
    t.match(ui.headers['content-type'], /^text\/html/);
    t.match(ui.body, /<html/i);
  });

  t.test('a typed client generated from it works', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'plinth-client-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'es2024', module: 'nodenext', moduleResolution: 'nodenext', allowImportingTsExtensions: true, noEmit: true, strict: true, skipLibCheck: true, types: ['node'] },
        files: ['client.ts'],
      }),
    );
    await writeFile(join(dir, 'api.ts'), await openapiTS(structuredClone(doc) as never));
    await writeFile(join(dir, 'client.ts'), CLIENT.replaceAll('// EXPECT-ERROR', '// @ts-expect-error'));

    // The generated types are strict enough to reject wrong calls: each
    // "expect-error" directive in CLIENT must meet an error, or tsc fails.
    // Run the native compiler itself: a node child would inherit tap's loader hooks.
    const { default: tscPath } = (await import(pathToFileURL(join(ROOT, 'node_modules/typescript/lib/getExePath.js')).href)) as { default: () => string };
    const tsc = spawnSync(tscPath(), ['-p', dir], { encoding: 'utf8' });
    t.equal(tsc.status, 0, `tsc on the generated client:\n${tsc.stdout}${tsc.stderr}`);

    const tenant = await ctx.tenant();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    const { run } = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as { run: (baseUrl: string, login: { tenant: string; email: string; password: string }) => Promise<ClientRun> };
    const r = await run(`http://127.0.0.1:${port}`, { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD });
    t.equal(r.created.status, 201);
    t.match(r.created.location, /^\/api\/products\/[0-9a-f-]{36}$/);
    t.match(r.created.product, { sku: 'CLIENT-1', name: 'Typed client', price: '9.90', unit: 'kg', version: 1 });
    t.match(r.list, { total: 1, page: 1, size: 10, items: [{ id: r.created.product.id }] });
    t.match(r.problem, { status: 400, code: 'VALIDATION_FAILED' });
    t.equal(r.created.etag, '"1"', 'the ETag, read through the type the document declares');
    t.equal(r.me, tenant.companyId, 'X-Company-Id sent as a typed header parameter');
  });
});

/** What CLIENT's run() returns. */
interface ClientRun {
  created: { status: number; location: string | undefined; etag: string | undefined; product: { id: string } & Record<string, unknown> };
  me: string | null | undefined;
  list: unknown;
  problem: unknown;
}

// What the generated client is asked to do; type-checked, then run. Its
// EXPECT-ERROR lines become @ts-expect-error directives once written out.
const CLIENT = `import createClient from 'openapi-fetch';
import type { components, paths } from './api.ts';

type Login = components['schemas']['AuthLogin'];

export async function run(baseUrl: string, login: Login) {
  const anonymous = createClient<paths>({ baseUrl });
  const auth = await anonymous.POST('/api/auth/login', { body: login });
  if (!auth.data) throw new Error(\`login answered \${auth.response.status}\`);
  const api = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${auth.data.accessToken}\` } });

  const created = await api.POST('/api/products', { body: { sku: 'CLIENT-1', name: 'Typed client', price: '9.90', unit: 'kg' } });
  if (!created.data) throw new Error(\`create answered \${created.response.status}\`);
  const product: components['schemas']['CatalogProduct'] = created.data;
  const list = await api.GET('/api/products', { params: { query: { search: 'typed', sort: '-createdAt', size: 10 } } });
  const bad = await api.GET('/api/products/{id}', { params: { path: { id: 'not-a-uuid' } } });
  const me = await api.GET('/api/auth/me', { params: { header: { 'x-company-id': product.companyId } } });
  // the headers each answer carries are in the types: no hand-written ones
  type Created = paths['/api/products']['post']['responses'][201]['headers'];
  const location: Created['Location'] = created.response.headers.get('location') ?? undefined;
  const etag: Created['ETag'] = created.response.headers.get('etag') ?? undefined;

  if (baseUrl === '') {
    // EXPECT-ERROR prices are decimal strings, never numbers
    await api.POST('/api/products', { body: { sku: 'X', price: 9.9 } });
    // EXPECT-ERROR the SKU is required on create
    await api.POST('/api/products', { body: { price: '1.00' } });
    // EXPECT-ERROR no such path
    await api.GET('/api/nowhere');
    // EXPECT-ERROR the unit is one of the manifest's values
    await api.PATCH('/api/products/{id}', { params: { path: { id: product.id } }, body: { unit: 'parsec' } });
    // EXPECT-ERROR a role's permissions are codes (strings), not anything
    const permissions: components['schemas']['CoreRole']['permissions'] = [42];
    // EXPECT-ERROR a product read declares no Location
    const none: paths['/api/products/{id}']['get']['responses'][200]['headers']['Location'] = undefined;
    void [permissions, none];
  }
  return {
    created: { status: created.response.status, location, etag, product },
    me: me.data?.companyId,
    list: list.data,
    problem: bad.error,
  };
}
`;
