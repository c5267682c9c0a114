// Generated routes for a manifest's CRUD declaration: list, read, create, PUT,
// PATCH, delete, and 405 for methods a path does not have. Each route declares
// its access (the pipeline checks it) and its schemas (validation, OpenAPI and
// serialisation all come from them).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Kernel } from '../kernel.ts';
import type { CrudRoute } from '../manifest/format.ts';
import { camel, entityNoun, pascal, plural, type EntityModel } from '../model/entity-model.ts';
import { etag, type CrudContext, type CrudService } from '../crud/crud-service.ts';
import { crudContextOf } from '../context/context-for.ts';
import { languagePreference, writeLanguage } from '../i18n.ts';
import { httpError, type ErrorCode } from '../errors.ts';
import { COMPANY_HEADER, IF_MATCH_HEADER, success, type ResponseHeader } from './headers.ts';
import { TRANSLATIONS_PARAM, listQuerySchema, schemaId } from './json-schemas.ts';
import type { RouteAccess } from './request-context.ts';
import { registerBulkRoute } from './bulk-routes.ts';
import { UUID } from '../ids.ts';
import type { Condition } from '../data/scope.ts';

type Op = NonNullable<CrudRoute['operations']>[number];
const ALL_OPS: Op[] = ['list', 'read', 'create', 'replace', 'update', 'delete'];

/** The path's parameters (a nested route's parent ids) and, for item paths, the row's own id. */
function paramsSchema(path: string, idParam?: string) {
  const names = path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
  const props = Object.fromEntries([...names, ...(idParam ? [idParam] : [])].map((n) => [n, Type.String({ format: 'uuid', description: n === idParam ? 'UUIDv7 id' : `id of the parent (${n})` })]));
  return Type.Object(props, { additionalProperties: false });
}
const ItemQuery = Type.Object({ translations: Type.Optional(TRANSLATIONS_PARAM) }, { additionalProperties: false });

function headerSchema(model: EntityModel, write: boolean) {
  const h: Record<string, unknown> = { 'x-company-id': COMPANY_HEADER };
  if (model.translatable.length) {
    h['accept-language'] = Type.Optional(Type.String({ description: 'language of translatable fields in the response' }));
    if (write) h['content-language'] = Type.Optional(Type.String({ description: 'language plain-string translatable values are stored under' }));
  }
  return Type.Object(h as Record<string, TSchema>);
}

function translationsParam(value: unknown): boolean | string[] {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  return String(value).split(',');
}

/** The data context of an authenticated request (the pipeline resolved tenant, company and ability). */
export function crudContext(request: FastifyRequest, kernel: Kernel): CrudContext {
  const tenant = request.tenant!;
  const fallback = tenant.defaultLanguage ?? kernel.config.defaultLanguage;
  return crudContextOf({
    tenant,
    em: request.em!,
    ability: request.ability!,
    companyId: request.companyId,
    principal: request.principal!,
    read: { prefs: languagePreference(request.headers['accept-language'], fallback), translations: translationsParam((request.query as Record<string, unknown> | undefined)?.translations) },
    writeLanguage: writeLanguage(request.headers['content-language'] as string | undefined, fallback),
  });
}

/**
 * `taken`: "METHOD /path" of the module's custom routes, which a CRUD path
 * may share (POST /api/users by a handler): those are no 405.
 */
export function registerCrudRoutes(app: FastifyInstance, kernel: Kernel, route: CrudRoute, taken = new Set<string>(), declaredBy?: string): void {
  const model = kernel.model(route.entity);
  const service = kernel.services.service(model.name);
  const ops = new Set(route.operations ?? ALL_OPS);
  // the module whose manifest declares the route (it may route another module's entity): its operations, under its tag
  const owner = kernel.modules.find((m) => m.manifest.id === (declaredBy ?? model.module))!.manifest;
  // <module><Verb><Entity>, the list's noun the entity's plural: never the URL's wording
  const opId = (verb: string, noun: string) => `${camel(owner.id)}${verb}${noun}`;
  const one = entityNoun(model.module, model.name);
  const many = plural(one);
  const idParam = route.idParam ?? 'id';
  const item = `${route.path}/:${idParam}`;
  const nested = route.path.includes('/:');
  const CollectionParams = nested ? paramsSchema(route.path) : undefined;
  const IdParams = paramsSchema(route.path, idParam);
  // a nested route's parent ids come from its path: they narrow every read and fill every create
  const boundOf = (request: FastifyRequest) => {
    if (!nested) return undefined;
    const params = request.params as Record<string, string>;
    return Object.fromEntries(model.pathBound.filter((f) => f.name in params).map((f) => [f.name, params[f.name]]));
  };
  const idOf = (request: FastifyRequest) => (request.params as Record<string, string>)[idParam];
  const collectionUrl = (request: FastifyRequest) => route.path.replace(/:([A-Za-z0-9]+)/g, (_, n: string) => (request.params as Record<string, string>)[n]);
  const access = (action: string, problems: ErrorCode[] = []) => ({
    access: { auth: 'user', admin: route.admin, company: model.scope === 'company', can: { action, subject: model.name } } satisfies RouteAccess,
    problems,
  });
  const problems = writeProblems(kernel, model, nested);
  // what a read says in its headers: the version always, the languages only where fields translate
  const rowHeaders: ResponseHeader[] = model.translatable.length ? ['ETag', 'Content-Language'] : ['ETag'];
  const listHeaders: ResponseHeader[] = model.translatable.length ? ['Content-Language'] : [];
  const codes = (action: string) => kernel.permissions.codesGranting(action, model.name);
  const describe = (action: string) => `Needs a permission granting "${action}" on ${model.name} (${codes(action).join(', ') || 'admin only'}).`;
  const tags = [owner.name];
  const send = (reply: FastifyReply, ctx: CrudContext, row: Record<string, any>, status = 200) => {
    const used = new Set<string>();
    const dto = service.toDto(row, ctx.read, used);
    if (used.size) reply.header('content-language', [...used].join(', '));
    return reply.code(status).header('etag', etag(row.version)).send(dto);
  };

  if (ops.has('list')) {
    app.get(
      route.path,
      {
        config: access('read', nested ? ['NOT_FOUND'] : []),
        schema: {
          operationId: opId('List', many),
          tags,
          summary: `List ${model.label} records`,
          description: describe('read'),
          security: [{ bearerAuth: [] }],
          headers: headerSchema(model, false),
          // a nested route's parent ids come from its path, never again from the query
          querystring: listQuerySchema(model, Object.keys(CollectionParams?.properties ?? {})),
          ...(CollectionParams ? { params: CollectionParams } : {}),
          response: { 200: success(Type.Ref(schemaId(model, 'List')), `A page of ${model.label} records`, listHeaders) },
        },
      },
      async (request, reply) => {
        const ctx = crudContext(request, kernel);
        const bound = boundOf(request);
        if (bound) await assertParents(kernel, ctx, model, bound);
        const used = new Set<string>();
        const page = await service.list(ctx, request.query as never, used, bound);
        if (used.size) reply.header('content-language', [...used].join(', '));
        return page;
      },
    );
  }
  if (ops.has('read')) {
    app.get(
      item,
      {
        config: access('read', ['NOT_FOUND']),
        schema: {
          operationId: opId('Get', one),
          tags,
          summary: `Read one ${model.label}`,
          description: describe('read'),
          security: [{ bearerAuth: [] }],
          headers: headerSchema(model, false),
          params: IdParams,
          querystring: ItemQuery,
          response: { 200: success(Type.Ref(schemaId(model)), `The ${model.label}`, rowHeaders) },
        },
      },
      async (request, reply) => {
        const ctx = crudContext(request, kernel);
        return send(reply, ctx, await service.read(ctx, idOf(request), boundOf(request)));
      },
    );
  }
  if (ops.has('create')) {
    app.post(
      route.path,
      {
        config: access('create', problems.create),
        schema: {
          operationId: opId('Create', one),
          tags,
          summary: `Create a ${model.label}`,
          description: describe('create'),
          security: [{ bearerAuth: [] }],
          headers: headerSchema(model, true),
          querystring: ItemQuery,
          body: Type.Ref(schemaId(model, 'Create')),
          ...(CollectionParams ? { params: CollectionParams } : {}),
          response: { 201: success(Type.Ref(schemaId(model)), `The ${model.label} created`, ['Location', ...rowHeaders]) },
        },
      },
      async (request, reply) => {
        const ctx = crudContext(request, kernel);
        const row = await service.create(ctx, request.body as Record<string, unknown>, {}, boundOf(request));
        reply.header('location', `${collectionUrl(request)}/${row.id}`);
        return send(reply, ctx, row, 201);
      },
    );
  }
  const update = (replace: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const ctx = crudContext(request, kernel);
    const row = await service.update(ctx, idOf(request), request.body as Record<string, unknown>, { ifMatch: request.headers['if-match'], replace }, boundOf(request));
    return send(reply, ctx, row);
  };
  const writeHeaders = Type.Object({ ...headerSchema(model, true).properties, 'if-match': IF_MATCH_HEADER });
  for (const [op, method, verb, kind] of [
    ['replace', 'PUT', 'Replace', 'Replace'],
    ['update', 'PATCH', 'Update', 'Patch'],
  ] as const) {
    if (!ops.has(op)) continue;
    app.route({
      method,
      url: item,
      config: access('update', problems.update),
      schema: {
        operationId: opId(verb, one),
        tags,
        summary: op === 'replace' ? `Replace a ${model.label} (every writable field)` : `Change some fields of a ${model.label}`,
        description: describe('update'),
        security: [{ bearerAuth: [] }],
        headers: writeHeaders,
        params: IdParams,
        querystring: ItemQuery,
        body: Type.Ref(schemaId(model, kind)),
        response: { 200: success(Type.Ref(schemaId(model)), `The ${model.label} as stored`, rowHeaders) },
      },
      handler: update(op === 'replace'),
    });
  }
  if (ops.has('delete')) {
    app.delete(
      item,
      {
        config: access('delete', problems.delete),
        schema: {
          operationId: opId('Delete', one),
          tags,
          summary: `Delete a ${model.label}`,
          description: `${describe('delete')} 409 while other rows reference it.`,
          security: [{ bearerAuth: [] }],
          headers: Type.Object({ 'x-company-id': COMPANY_HEADER, 'if-match': IF_MATCH_HEADER }),
          params: IdParams,
          // declared empty so an unknown parameter (?force=true) is a 400, as on every other route, not ignored
          querystring: Type.Object({}, { additionalProperties: false }),
          response: { 204: success({ type: 'null' }, `The ${model.label} is deleted`) },
        },
      },
      async (request, reply) => {
        await service.remove(crudContext(request, kernel), idOf(request), request.headers['if-match'], boundOf(request));
        return reply.code(204).send();
      },
    );
  }
  if (ops.has('create') || ops.has('update') || ops.has('delete')) {
    registerBulkRoute(app, kernel, {
      path: route.path,
      service,
      ops,
      access: { auth: 'user', admin: route.admin, company: model.scope === 'company' },
      tags,
      operationId: opId('Bulk', many),
      headers: headerSchema(model, true),
      params: CollectionParams,
      context: (request) => crudContext(request, kernel),
      bound: boundOf,
      checkParents: async (request) => {
        const bound = boundOf(request);
        // before validation: ids that are no UUID are left to its 400
        if (bound && Object.values(bound).every((id) => UUID.test(id))) await assertParents(kernel, crudContext(request, kernel), model, bound);
      },
    });
    registerMethodNotAllowed(app, `${route.path}/bulk`, ['POST']);
  }
  for (const list of route.lists ?? []) {
    const o = { access: access('read').access, tags, describe: describe('read') };
    if (list.where) registerConditionList(app, kernel, service, { path: list.path, where: list.where, summary: list.summary }, { ...o, opId: opId('List', `${many}${list.name}`) });
    else registerSubList(app, kernel, service, { path: list.path, by: list.by! }, { ...o, opId: opId('List', `${many}By${pascal(list.by!.replace(/Id$/, ''))}`) });
  }
  const mine = (path: string) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => taken.has(`${m} ${path}`));
  registerMethodNotAllowed(app, route.path, [...(ops.has('list') ? ['GET'] : []), ...(ops.has('create') ? ['POST'] : []), ...mine(route.path)]);
  registerMethodNotAllowed(app, item, [
    ...(ops.has('read') ? ['GET'] : []),
    ...(ops.has('replace') ? ['PUT'] : []),
    ...(ops.has('update') ? ['PATCH'] : []),
    ...(ops.has('delete') ? ['DELETE'] : []),
    ...mine(item),
  ]);
  for (const list of route.lists ?? []) registerMethodNotAllowed(app, list.path, ['GET', ...mine(list.path)]);
}

/**
 * The codes a write of this entity can answer (core/crud/crud-service.ts): a
 * unique or reference conflict and a field rule always; a missing row, a stale
 * If-Match; a missing or locked parent; a state flow's refusals.
 */
function writeProblems(kernel: Kernel, model: EntityModel, nested: boolean): Record<'create' | 'update' | 'delete', ErrorCode[]> {
  const parents = [...model.pathBound.map((f) => f.name), ...model.feeds.map((r) => r.by)].map((name) => kernel.model(model.byName.get(name)!.entity!));
  const lockingParent = model.pathBound.some((f) => kernel.model(f.entity!).transitions?.lockedIn?.length);
  const locked: ErrorCode[] = model.transitions?.lockedIn?.length || lockingParent ? ['STATE_LOCKED'] : [];
  const flow: ErrorCode[] = model.transitions ? ['INVALID_TRANSITION'] : [];
  const parentMissing: ErrorCode[] = nested || parents.length ? ['NOT_FOUND'] : [];
  // what the modules' write hooks say their refusals answer
  const hooked = (op: 'create' | 'update' | 'delete') => (kernel.hooks.get(model.name) ?? []).flatMap((h) => h.problems?.[op] ?? []);
  const unique = (codes: ErrorCode[]) => [...new Set(codes)];
  return {
    create: unique(['CONFLICT', 'FORBIDDEN', ...parentMissing, ...(lockingParent ? (['STATE_LOCKED'] as ErrorCode[]) : []), ...flow, ...hooked('create')]),
    update: unique(['NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'PRECONDITION_FAILED', ...locked, ...flow, ...hooked('update')]),
    delete: unique(['NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'PRECONDITION_FAILED', ...locked, ...hooked('delete')]),
  };
}

/** 404 unless the caller can read every parent a nested path names. */
async function assertParents(kernel: Kernel, ctx: CrudContext, model: EntityModel, bound: Record<string, string>): Promise<void> {
  for (const [name, id] of Object.entries(bound)) {
    const parent = kernel.model(model.byName.get(name)!.entity!);
    if (!(await kernel.services.service(parent.name).visible(ctx, id))) throw httpError('NOT_FOUND', `${parent.name} ${id} does not exist`);
  }
}

/**
 * A list of the rows pointing at one row, the parent's id in the path
 * (/api/emails/company/:companyId): the entity's list, narrowed; 404 when no
 * such parent exists in the caller's scope.
 */
function registerSubList(
  app: FastifyInstance,
  kernel: Kernel,
  service: CrudService,
  list: { path: string; by: string },
  o: { access: RouteAccess; tags: string[]; describe: string; opId: string },
): void {
  const model = service.model;
  const parent = kernel.model(model.byName.get(list.by)!.entity!);
  app.get(
    list.path,
    {
      config: { access: o.access, problems: ['NOT_FOUND'] },
      schema: {
        operationId: o.opId,
        tags: o.tags,
        summary: `List the ${model.label} records of one ${parent.label}`,
        description: o.describe,
        security: [{ bearerAuth: [] }],
        headers: headerSchema(model, false),
        params: Type.Object({ [list.by]: Type.String({ format: 'uuid', description: `id of the ${parent.label}` }) }, { additionalProperties: false }),
        querystring: listQuerySchema(model, [list.by]),
        response: { 200: success(Type.Ref(schemaId(model, 'List')), `A page of the ${model.label} records of the ${parent.label}`, model.translatable.length ? ['Content-Language'] : []) },
      },
    },
    async (request, reply) => {
      const ctx = crudContext(request, kernel);
      const id = (request.params as Record<string, string>)[list.by];
      if (!(await kernel.services.service(parent.name).visible(ctx, id))) throw httpError('NOT_FOUND', `${parent.name} ${id} does not exist`);
      const used = new Set<string>();
      const page = await service.list(ctx, request.query as never, used, { [list.by]: id });
      if (used.size) reply.header('content-language', [...used].join(', '));
      return page;
    },
  );
}

/** A list of the rows meeting a declared condition ("${user.id}" the caller), within the caller's read scope, with the entity's list parameters. */
function registerConditionList(
  app: FastifyInstance,
  kernel: Kernel,
  service: CrudService,
  list: { path: string; where: Condition; summary?: string },
  o: { access: RouteAccess; tags: string[]; describe: string; opId: string },
): void {
  const model = service.model;
  app.get(
    list.path,
    {
      config: { access: o.access, problems: [] },
      schema: {
        operationId: o.opId,
        tags: o.tags,
        summary: list.summary ?? `List the ${model.label} records meeting a condition`,
        description: o.describe,
        security: [{ bearerAuth: [] }],
        headers: headerSchema(model, false),
        querystring: listQuerySchema(model, []),
        response: { 200: success(Type.Ref(schemaId(model, 'List')), `A page of ${model.label} records`, model.translatable.length ? ['Content-Language'] : []) },
      },
    },
    async (request, reply) => {
      const used = new Set<string>();
      const page = await service.list(crudContext(request, kernel), request.query as never, used, undefined, list.where);
      if (used.size) reply.header('content-language', [...used].join(', '));
      return page;
    },
  );
}

/** Methods a path lacks answer 405 with Allow, not 404 (the seed lists PUT/DELETE on collections). */
function registerMethodNotAllowed(app: FastifyInstance, url: string, allowed: string[]): void {
  if (!allowed.length) return;
  const missing = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !allowed.includes(m));
  const allow = allowed.join(', ');
  const refuse = async () => {
    throw httpError('METHOD_NOT_ALLOWED', `${url} allows ${allow}`, { headers: { allow } });
  };
  // refused on arrival, before the body is parsed or the input guard reads the query:
  // the method is wrong whatever the request carries (the handler is never reached)
  app.route({ method: missing as never, url, schema: { hide: true }, onRequest: refuse, handler: refuse });
}
