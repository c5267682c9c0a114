// Every operation of the published OpenAPI document, joined with what the
// manifests say about it: who may call it (public, any user, platform
// operators; admin-only; the CASL action and subject it checks), the entity it
// works on, and which entity each path parameter names. The attack suites are
// generated from this, so a new module or route is covered without edits here.
import type { Kernel } from '../../../core/kernel.ts';
import type { EntityModel } from '../../../core/model/entity-model.ts';

export type Schema = Record<string, any>;
export interface Parameter {
  name: string;
  in: 'query' | 'header' | 'path';
  schema: Schema;
  description?: string;
  required?: boolean;
}
export interface DocOperation {
  operationId: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  security?: Array<Record<string, unknown>>;
}
export interface Doc {
  paths: Record<string, Record<string, DocOperation>>;
  components: { schemas: Record<string, Schema> };
}

export type Kind = 'list' | 'read' | 'create' | 'replace' | 'update' | 'delete' | 'custom' | 'kernel';

export interface ApiOperation {
  id: string;
  method: string;
  /** OpenAPI form: /api/crm/quotes/{quoteId}/lines/{lineId} */
  path: string;
  doc: DocOperation;
  params: Parameter[];
  pathParams: string[];
  body?: Schema;
  auth: 'public' | 'user' | 'platform';
  /** a module authenticator the operation takes instead of user tokens (auth stays 'public' to the attack suites, which hold no such credentials) */
  authenticator?: string;
  admin: boolean;
  can?: { action: string; subject: string };
  entity?: string;
  /** works on company-scoped rows (its entity's scope) */
  company: boolean;
  kind: Kind;
  /** the row a path parameter names: an entity, or 'Tenant' for the tenant registry */
  addresses: Record<string, string>;
  /** the item parameter of a generated item route (id, lineId) */
  idParam?: string;
  /** operations of one entity (or one kernel area) share a group: a fuzz shard takes whole groups */
  group: string;
}

export interface Api {
  doc: Doc;
  ops: ApiOperation[];
  kernel: Kernel;
  resolve(s: Schema): Schema;
  model(name: string): EntityModel | undefined;
  /** every permission code the loaded manifests declare */
  codes: string[];
  codesGranting(action: string, subject: string): string[];
  /** the operation that creates rows of an entity (generated POST, or a custom POST with access create) */
  creator(entity: string): ApiOperation | undefined;
  /** GET of one row of an entity */
  reader(entity: string): ApiOperation | undefined;
  /** the entity whose id a field (or path parameter) of `entity` carries */
  refTarget(entity: string | undefined, name: string): string | undefined;
}

const toDoc = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const CRUD: Array<[Kind, string, 'collection' | 'item', string]> = [
  ['list', 'GET', 'collection', 'read'],
  ['create', 'POST', 'collection', 'create'],
  ['read', 'GET', 'item', 'read'],
  ['replace', 'PUT', 'item', 'update'],
  ['update', 'PATCH', 'item', 'update'],
  ['delete', 'DELETE', 'item', 'delete'],
];

interface Known {
  kind: Kind;
  entity?: string;
  admin: boolean;
  can?: { action: string; subject: string };
  idParam?: string;
}

/** METHOD path → what the manifests declare for it. */
function manifestRoutes(kernel: Kernel): Map<string, Known> {
  const out = new Map<string, Known>();
  for (const m of kernel.modules) {
    for (const r of m.manifest.routes ?? []) {
      if ('entity' in r) {
        const ops = new Set(r.operations ?? CRUD.map(([k]) => k));
        const idParam = r.idParam ?? 'id';
        for (const [kind, method, where, action] of CRUD) {
          if (!ops.has(kind as never)) continue;
          const path = where === 'item' ? `${toDoc(r.path)}/{${idParam}}` : toDoc(r.path);
          out.set(`${method} ${path}`, { kind, entity: r.entity, admin: r.admin === true, can: { action, subject: r.entity }, ...(where === 'item' ? { idParam } : {}) });
        }
        for (const l of r.lists ?? []) out.set(`GET ${toDoc(l.path)}`, { kind: 'list', entity: r.entity, admin: r.admin === true, can: { action: 'read', subject: r.entity } });
      } else {
        out.set(`${r.method} ${toDoc(r.path)}`, { kind: 'custom', entity: r.access.subject, admin: r.admin === true, can: r.access });
      }
    }
  }
  return out;
}

/**
 * An allOf as one schema (a json field's described reference to a manifest's
 * schema, a named schema narrowing another): its branches' keywords together,
 * without the properties a branch rules out (false).
 */
function allOf({ allOf: branches, ...own }: Schema, resolve: (s: Schema) => Schema): Schema {
  const all = [own, ...(branches as Schema[]).map(resolve)];
  const out: Schema = Object.assign({}, ...all);
  if (all.some((b) => b.properties)) {
    const properties = Object.assign({}, ...all.map((b) => b.properties ?? {}));
    out.properties = Object.fromEntries(Object.entries(properties).filter(([, v]) => v !== false));
    out.required = all.flatMap((b) => b.required ?? []).filter((k: string) => k in out.properties);
  }
  return out;
}

function describeApi(doc: Doc, kernel: Kernel): Api {
  const resolve = (s: Schema): Schema => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]) : Array.isArray(s?.allOf) ? allOf(s, resolve) : s);
  const model = (name: string) => kernel.models.get(name);
  const refTarget = (entity: string | undefined, name: string): string | undefined => {
    const f = entity ? model(entity)?.byName.get(name) : undefined;
    if (f?.type === 'ref') return f.entity;
    // a name no field of the entity has: any entity's ref field of that name, else the name itself (companyIds → Company)
    for (const m of kernel.models.values()) {
      const g = m.byName.get(name);
      if (g?.type === 'ref') return g.entity;
    }
    const base = /^(.+?)Ids?$/.exec(name)?.[1];
    const guess = base && base[0].toUpperCase() + base.slice(1);
    return guess && model(guess) ? guess : undefined;
  };
  const known = manifestRoutes(kernel);
  const ops: ApiOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(item)) {
      const method = m.toUpperCase();
      const k = known.get(`${method} ${path}`);
      // an empty requirement ({}) lets anonymous callers in (the logout takes a refresh token alone)
      const secured = (op.security ?? []).some((s) => 'bearerAuth' in s) && !(op.security ?? []).some((s) => !Object.keys(s).length);
      const moduleAuth = (op.security ?? []).flatMap((s) => Object.keys(s)).find((name) => kernel.authenticators.has(name));
      // kernel routes are no manifest's: the platform area is for operators (admins of the platform tenant)
      const platform = !k && path.startsWith('/api/platform/');
      const pathParams = [...path.matchAll(/\{([^}]+)\}/g)].map((x) => x[1]);
      const addresses: Record<string, string> = {};
      for (const p of pathParams) {
        const target = platform ? 'Tenant' : p === k?.idParam || (p === 'id' && k) ? k!.entity : refTarget(k?.entity, p);
        if (target) addresses[p] = target;
      }
      const body = op.requestBody?.content['application/json']?.schema;
      ops.push({
        id: op.operationId,
        method,
        path,
        doc: op,
        params: op.parameters ?? [],
        pathParams,
        ...(body ? { body: resolve(body) } : {}),
        auth: !secured ? 'public' : platform ? 'platform' : 'user',
        ...(moduleAuth ? { authenticator: moduleAuth } : {}),
        admin: k ? k.admin : platform,
        ...(k?.can ? { can: k.can } : {}),
        ...(k?.entity ? { entity: k.entity } : {}),
        company: k?.entity ? model(k.entity)?.scope === 'company' : false,
        kind: k?.kind ?? 'kernel',
        addresses,
        ...(k?.idParam ? { idParam: k.idParam } : {}),
        group: k?.entity ?? (path.startsWith('/api/') ? path.split('/')[2] : path.split('/')[1]),
      });
    }
  }
  return {
    doc,
    ops,
    kernel,
    resolve,
    model,
    refTarget,
    codes: kernel.permissions.all(),
    codesGranting: (action, subject) => kernel.permissions.codesGranting(action, subject),
    creator: (entity) =>
      ops.find((o) => o.kind === 'create' && o.entity === entity) ??
      ops.find((o) => o.kind === 'custom' && o.method === 'POST' && o.can?.action === 'create' && o.can.subject === entity && !o.pathParams.length),
    reader: (entity) =>
      ops.find((o) => o.kind === 'read' && o.entity === entity) ??
      // a module's own GET of one row (one that adds what is computed when read, e.g. a client's presence)
      ops.find((o) => o.kind === 'custom' && o.method === 'GET' && o.auth === 'user' && o.can?.action === 'read' && o.can.subject === entity && o.path.endsWith('/{id}') && o.pathParams.length === 1),
  };
}

export async function loadApi(app: { inject: (o: { method: 'GET'; url: string }) => Promise<{ json(): unknown }> }, kernel: Kernel): Promise<Api> {
  return describeApi((await app.inject({ method: 'GET', url: '/api-docs/json' })).json() as Doc, kernel);
}

/** The path with its parameters filled in (values as given: encode junk before). */
export const fillPath = (path: string, values: Record<string, string>) =>
  path.replace(/\{([^}]+)\}/g, (_, n: string) => {
    if (values[n] === undefined) throw new Error(`no value for {${n}} in ${path}`);
    return values[n];
  });
