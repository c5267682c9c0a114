// A module's routes, from its manifest: generated CRUD per entity, and custom
// routes bound to handlers its plugin exports.
import type { FastifyInstance } from 'fastify';
import type { Kernel, LoadedModule } from '../kernel.ts';
import { ManifestError } from '../manifest/errors.ts';
import type { CustomRoute } from '../manifest/format.ts';
import { declaredIds } from '../manifest/schemas.ts';
import { camel } from '../model/entity-model.ts';
import { bodySchema, listItemSchema, listSchema, outputSchema } from './json-schemas.ts';
import { bulkSchemas } from './bulk-schemas.ts';
import { crudContext, registerCrudRoutes } from './crud-routes.ts';
import { DATA_WRITE_PROBLEMS } from './route-problems.ts';
import { RESPONSE_HEADERS, success, type ResponseHeader } from './headers.ts';

/**
 * The manifest's named schemas, each with its name as $id: what a
 * { "$ref": "<Name>" } in a field's or a handler's schema resolves to, and
 * the OpenAPI component of that name.
 */
export const namedSchemas = (module: LoadedModule) => Object.entries(module.manifest.schemas ?? {}).map(([name, schema]) => ({ $id: name, ...schema }));

/** The $id-named schemas of every entity a module exposes through CRUD. */
export function entitySchemas(kernel: Kernel, module: LoadedModule) {
  // entities with a CRUD route anywhere have their schema in the document: a list embeds them by reference
  const crud = new Set(kernel.modules.flatMap((m) => (m.manifest.routes ?? []).flatMap((r) => ('entity' in r ? [r.entity] : []))));
  const published = (entity: string) => (crud.has(entity) ? kernel.model(entity) : undefined);
  return (module.manifest.routes ?? []).flatMap((r) => {
    if (!('entity' in r)) return [];
    const model = kernel.model(r.entity);
    // only the shapes its operations use: an unused component is noise in generated clients
    const ops = new Set(r.operations ?? ['list', 'read', 'create', 'replace', 'update', 'delete']);
    return [
      outputSchema(model),
      ...(ops.has('create') ? [bodySchema(model, 'Create')] : []),
      ...(ops.has('replace') ? [bodySchema(model, 'Replace')] : []),
      ...(ops.has('update') ? [bodySchema(model, 'Patch')] : []),
      ...(ops.has('list') || r.lists?.length ? [listItemSchema(model, published), listSchema(model)] : []),
      ...(ops.has('create') || ops.has('update') || ops.has('delete') ? bulkSchemas(model, ops, kernel.config.bulkMaxRows) : []),
    ];
  });
}

export function registerModuleRoutes(app: FastifyInstance, kernel: Kernel, module: LoadedModule): void {
  const custom = new Set((module.manifest.routes ?? []).flatMap((r) => ('entity' in r ? [] : [`${r.method} ${r.path}`])));
  (module.manifest.routes ?? []).forEach((route, i) => {
    if ('entity' in route) return registerCrudRoutes(app, kernel, route, custom, module.manifest.id);
    registerCustomRoute(app, kernel, module, route, i);
  });
}

function registerCustomRoute(app: FastifyInstance, kernel: Kernel, module: LoadedModule, route: CustomRoute, index: number): void {
  const handler = module.plugin?.handlers?.[route.handler];
  if (!handler) throw new ManifestError(module.file, `/routes/${index}/handler`, `plugins/${module.manifest.id}/index.ts exports no handler "${route.handler}"`);
  if (typeof handler.handle !== 'function')
    throw new ManifestError(module.file, `/routes/${index}/handler`, `plugins/${module.manifest.id}/index.ts: "${route.handler}" is no handler (make it with handler() from core/plugin-api.ts)`);
  // schemas are declared once: in the handler (TypeBox, typing its request) or in the manifest
  if (route.schema && Object.keys(handler.schema).length)
    throw new ManifestError(module.file, `/routes/${index}/schema`, `the schemas of "${route.handler}" are declared in its handler too; keep one`);
  // shared schemas have one home, the manifest's "schemas": one inline would be registered by every route using it
  const [id] = declaredIds(route.schema ?? handler.schema);
  if (id !== undefined)
    throw new ManifestError(
      module.file,
      `/routes/${index}/handler`,
      `"${route.handler}" declares schema "${id}" inline: put it under the manifest's "schemas" and refer to it by name (Type.Ref('${id}'))`,
    );
  if (route.auth && !kernel.authenticators.has(route.auth)) throw new ManifestError(module.file, `/routes/${index}/auth`, `no plugin exports an authenticator "${route.auth}"`);
  const subject = kernel.models.get(route.access.subject);
  const schema = (route.schema ?? handler.schema) as NonNullable<CustomRoute['schema']> & { upload?: unknown };
  if (schema.upload && schema.body) throw new ManifestError(module.file, `/routes/${index}/handler`, `"${route.handler}" declares a JSON body and an upload; a route takes one`);
  app.route({
    method: route.method,
    url: route.path,
    config: {
      access: { auth: route.auth ? 'module' : 'user', authenticator: route.auth, admin: route.admin, company: subject?.scope === 'company', can: route.access },
      // a handler works through the entities' data access, so it may answer what that answers
      problems: [...DATA_WRITE_PROBLEMS, ...(handler.schema.problems ?? [])],
      ...(schema.upload ? { multipart: true } : {}),
    },
    schema: {
      operationId: `${camel(module.manifest.id)}${route.handler[0].toUpperCase()}${route.handler.slice(1)}`,
      tags: [module.manifest.name],
      summary: route.summary,
      security: [{ [route.auth ?? 'bearerAuth']: [] }],
      ...(schema.params ? { params: schema.params } : {}),
      // none declared: an unknown query parameter is a 400, as on every generated route
      querystring: schema.querystring ?? { type: 'object', properties: {}, additionalProperties: false },
      ...(schema.body ? { body: schema.body } : {}),
      // documented, not validated (http/validation.ts): the handler reads the upload as a stream (readUpload)
      ...(schema.upload ? { body: { content: { 'multipart/form-data': { schema: schema.upload } } } } : {}),
      response: documentedResponses(
        schema.response ?? {},
        route.summary,
        (id) => app.getSchema(id) as Record<string, unknown> | undefined,
        (h) => new ManifestError(module.file, `/routes/${index}`, `"${route.handler}" names no response header "${h}" (known: ${Object.keys(RESPONSE_HEADERS).join(', ')})`),
      ),
    },
    handler: (request, reply) => handler.handle(kernel.services.contextOf(crudContext(request, kernel)), request as never, reply),
  });
}

/**
 * A handler's success schemas as documented responses: described in words (the
 * schema's description, else the route's summary) with the headers the schema
 * names (`headers: ['location']`), which are no part of the body; a file, not
 * JSON, names its media type (`mediaType: 'application/octet-stream'`).
 */
function documentedResponses(
  response: Record<string, unknown>,
  summary: string | undefined,
  named: (id: string) => Record<string, unknown> | undefined,
  unknownHeader: (name: string) => Error,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(response).map(([status, raw]) => {
      const { description, headers, mediaType, ...schema } = raw as { description?: string; headers?: ResponseHeader[]; mediaType?: string };
      const unknown = headers?.find((h) => !(h in RESPONSE_HEADERS));
      if (unknown) throw unknownHeader(unknown);
      return [status, success(closedAllOf(schema, named), description ?? summary ?? `Status ${status}`, headers, mediaType)];
    }),
  );
}

type JsonSchema = Record<string, unknown> & { allOf?: JsonSchema[]; $ref?: string; type?: unknown; properties?: Record<string, unknown>; required?: string[] };

/**
 * An intersection of objects (an entity's answer and the fields a handler adds:
 * a client and its new API key) as one object. Kept as `allOf`, a closed entity
 * schema (additionalProperties: false) would refuse the added fields, so no
 * answer could match the document.
 */
function closedAllOf(schema: JsonSchema, named: (id: string) => JsonSchema | undefined): JsonSchema {
  if (!Array.isArray(schema.allOf)) return schema;
  const parts = schema.allOf.map((p) => (typeof p.$ref === 'string' ? named(p.$ref) : p));
  if (!parts.every((p): p is JsonSchema => p?.type === 'object' && typeof p.properties === 'object')) return schema;
  const { allOf: _allOf, ...rest } = schema;
  return {
    ...rest,
    type: 'object',
    properties: Object.assign({}, ...parts.map((p) => p.properties)),
    required: [...new Set(parts.flatMap((p) => p.required ?? []))],
    additionalProperties: false,
  };
}
