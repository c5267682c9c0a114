// POST <collection>/bulk: up to BULK_MAX_ROWS creates, updates and deletes of
// one entity in one transaction (core/crud/bulk.ts). 200 with every written
// row when all succeeded; else 422 BULK_FAILED listing each failed row with
// the status and problem it alone would have answered, and nothing written.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Kernel } from '../kernel.ts';
import type { CrudContext, CrudService } from '../crud/crud-service.ts';
import { BulkFailed, runBulk, type BulkFailure, type BulkInput } from '../crud/bulk.ts';
import { ERRORS, httpError, titleOf } from '../errors.ts';
import { mapError, PROBLEM_CONTENT_TYPE, problemBody } from './problem.ts';
import { success } from './headers.ts';
import { schemaId } from './json-schemas.ts';
import type { RouteAccess } from './request-context.ts';

export interface BulkRouteOptions {
  path: string;
  service: CrudService;
  ops: Set<string>;
  access: RouteAccess;
  tags: string[];
  operationId: string;
  headers: TSchema;
  params?: TSchema;
  context(request: FastifyRequest): CrudContext;
  /** a nested route's parent ids (from its path) */
  bound(request: FastifyRequest): Record<string, string> | undefined;
  /** 404 unless the caller can read every parent the path names */
  checkParents(request: FastifyRequest): Promise<void>;
}

const SECTIONS = ['create', 'update', 'delete'] as const;

/** A row's error that answers 4xx belongs to the row; anything else ends the request. */
const isRowError = (err: unknown) => {
  const code = mapError(err as FastifyError).code;
  return ERRORS[code][0] < 500;
};

function failureOf(f: BulkFailure) {
  const m = mapError(f.error as FastifyError);
  const status = ERRORS[m.code][0];
  return {
    op: f.op,
    index: f.index,
    ...(f.id ? { id: f.id } : {}),
    status,
    problem: { status, code: m.code, title: titleOf(m.code), detail: m.detail, ...(m.errors?.length ? { errors: m.errors } : {}) },
  };
}

export function registerBulkRoute(app: FastifyInstance, kernel: Kernel, o: BulkRouteOptions): void {
  const model = o.service.model;
  const max = kernel.config.bulkMaxRows;
  const sections = SECTIONS.filter((s) => o.ops.has(s));
  app.post(
    `${o.path}/bulk`,
    {
      config: { access: o.access, problems: ['FORBIDDEN', 'BULK_FAILED', ...(o.params ? (['NOT_FOUND'] as const) : [])] },
      // a path naming a row the caller cannot see is a 404 whatever the body holds, as an unknown id is
      ...(o.params ? { preValidation: async (request: FastifyRequest) => o.checkParents(request) } : {}),
      schema: {
        operationId: o.operationId,
        tags: o.tags,
        summary: `Create, change and delete ${model.label} records in one transaction`,
        description:
          `Up to ${max} rows in all (${sections.join(', ')}), run in that order in one transaction, each as its single route would run it ` +
          '(permissions, field rules, hooks, events; `version` acts as If-Match). All or nothing: when any row fails, nothing is written and ' +
          '422 BULK_FAILED lists every failed row with the status and problem it alone would have answered. ' +
          `Needs the permission each list needs: ${sections.map((s) => `"${s}" on ${model.name}`).join(', ')}.`,
        security: [{ bearerAuth: [] }],
        headers: o.headers,
        ...(o.params ? { params: o.params } : {}),
        querystring: Type.Object({}, { additionalProperties: false }),
        body: Type.Ref(schemaId(model, 'Bulk')),
        response: {
          200: success(Type.Ref(schemaId(model, 'BulkResult')), `The ${model.label} records created, changed and deleted`, model.translatable.length ? ['Content-Language'] : []),
        },
      },
    },
    async (request, reply) => {
      const ctx = o.context(request);
      const body = request.body as BulkInput;
      const rows = SECTIONS.reduce((n, s) => n + (body[s]?.length ?? 0), 0);
      if (rows === 0 || rows > max) {
        const message = rows ? `holds ${rows} rows, at most ${max} are allowed` : 'holds no row';
        throw httpError('VALIDATION_FAILED', `bulk request ${message}`, { errors: [{ path: '/', message }] });
      }
      for (const s of SECTIONS) {
        if (body[s]?.length && !ctx.ability.can(s, model.name)) throw httpError('FORBIDDEN', `not allowed to ${s} a ${model.name}`);
      }
      const bound = o.bound(request);
      try {
        const done = await runBulk(o.service, ctx, body, bound, isRowError);
        const used = new Set<string>();
        const out = { created: done.created.map((r) => o.service.toDto(r, ctx.read, used)), updated: done.updated.map((r) => o.service.toDto(r, ctx.read, used)), deleted: done.deleted };
        if (used.size) reply.header('content-language', [...used].join(', '));
        return out;
      } catch (err) {
        if (!(err instanceof BulkFailed)) throw err;
        const doc = problemBody({ code: 'BULK_FAILED', detail: `${err.failures.length} of ${rows} rows failed; nothing was written` }, String(request.id), request.url.split('?')[0]);
        // the Problem document with its `failures` member (the error handler renders none)
        return (reply as FastifyReply)
          .code(422)
          .type(PROBLEM_CONTENT_TYPE)
          .send({ ...doc, failures: err.failures.map(failureOf) });
      }
    },
  );
}
