// What a module's plugins/<module>/index.ts may export: handlers for the
// custom routes its manifest names, and write hooks by entity name (its own
// entities or another module's). Both receive a ModuleContext.
//
// A handler declares its route's schemas in TypeBox beside its code, so the
// request it receives is typed from them (no `request.body as …`), and the
// kernel validates, documents and serialises the route from the same schemas.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { ModuleContext } from './module-context.ts';
import type { EntityHooks } from './hooks.ts';
import type { Authenticator } from './authenticators.ts';
import type { PlinthEvent } from '../data/outbox.ts';
import type { ErrorCode } from '../errors.ts';

export type { PlinthEvent };

/**
 * A module's reaction to events (its own or another module's): runs after
 * the event's transaction committed, at least once, in one transaction with a
 * receipt of the event id, so its writes happen once; as the system, in the
 * event's tenant and company. Slow work (HTTP) belongs in a job it enqueues.
 */
export interface Subscriber {
  /** event types or patterns: "crm.lead.converted", "crm.*", "crm.lead.*", "*" */
  events: string[];
  /** one event, in a transaction of its own */
  handle?(ctx: ModuleContext, event: PlinthEvent): Promise<void>;
  /** or: the events of one tenant and company that arrived together, oldest first, in one transaction (a burst costs one query, not one per event) */
  handleMany?(ctx: ModuleContext, events: PlinthEvent[]): Promise<void>;
}

/** What a job's handler learns about its run. */
export interface JobRun {
  /** the job's id (as ctx.enqueue answered it) */
  id: string;
  /** 1 on the first try */
  attempt: number;
  /** tries it has in all; attempt === attempts is the last */
  attempts: number;
}

/**
 * Work run by the job runner, as the system, in the tenant and company it was
 * enqueued for (ctx.enqueue, or per tenant on `cron`); retried with
 * exponential backoff and jitter until `attempts`, then `dead` is told.
 */
export interface JobDefinition<T = any> {
  /** does the work with the data it was enqueued with; a throw (or the timeout) fails the try */
  handle(ctx: ModuleContext, data: T, run: JobRun): Promise<void>;
  /** tries before the job is dead (default 5) */
  attempts?: number;
  /** delay before the first retry, in seconds; it doubles with every try, with jitter (default 5) */
  retryDelaySeconds?: number;
  /** longest delay between tries, in seconds (default 3600) */
  retryDelayMaxSeconds?: number;
  /** seconds a try may take before it counts as failed (default 300) */
  timeoutSeconds?: number;
  /** once the last try failed: record it, tell someone, disable something */
  dead?(ctx: ModuleContext, data: T, error: string): Promise<void>;
  /** also run for every active tenant on this cron expression, in the tenant's time zone (data: {}) */
  cron?: string;
}

/**
 * A custom route's schemas; `response` by status code ($ref to an entity's
 * schema by id, e.g. Type.Ref('CrmLead')). A response that is a file, not
 * JSON, says so with its media type: `Type.String({ format: 'binary', mediaType: 'application/octet-stream' })`.
 */
export interface RouteSchemas {
  /** the path's parameters (:id), validated and typed */
  params?: TSchema;
  /** the query string, validated and typed */
  querystring?: TSchema;
  /** the JSON body, validated and typed (400 VALIDATION_FAILED when it does not match) */
  body?: TSchema;
  /**
   * The route takes a multipart/form-data upload instead of a JSON body: the
   * form's fields as the document shows them, the file as
   * `Type.String({ format: 'binary' })`. The handler reads it as a stream with
   * readUpload(request), which checks it (this schema is not applied).
   */
  upload?: TSchema;
  /** the answer by status code: the route's answer is serialised by it and documented from it (`description`, `headers`) in OpenAPI */
  response?: Record<number, TSchema>;
  /** problem codes the handler raises beyond what its data access may (DATA_WRITE_PROBLEMS), e.g. PRECONDITION_FAILED for an If-Match it honours: documented in OpenAPI */
  problems?: ErrorCode[];
}

type Part<S extends RouteSchemas, K extends 'params' | 'querystring' | 'body'> = S[K] extends TSchema ? Static<S[K]> : unknown;

/** The request as the route's schemas type it. */
export type TypedRequest<S extends RouteSchemas> = FastifyRequest<{ Params: Part<S, 'params'>; Querystring: Part<S, 'querystring'>; Body: Part<S, 'body'> }>;

/** A custom route's code, made by handler(): named in the module's `handlers`, routed by the manifest's route with that handler name. */
export interface PluginHandler<S extends RouteSchemas = RouteSchemas> {
  /** the route's schemas: the kernel validates, types, documents (OpenAPI) and serialises the route from them */
  schema: S;
  /** runs after the route's access check, with the caller's context; what it returns is the answer's body (serialised by `response`) */
  handle(ctx: ModuleContext, request: TypedRequest<S>, reply: FastifyReply): Promise<unknown>;
}

/** A custom route's handler: `handler({ params, body, response }, async (ctx, request, reply) => …)`. */
export function handler<S extends RouteSchemas>(schema: S, handle: (ctx: ModuleContext, request: TypedRequest<S>, reply: FastifyReply) => Promise<unknown>): PluginHandler<S> {
  return { schema, handle };
}

/** An answer of the API to a console page: status, and the JSON body (a problem when not ok). */
export interface PageAnswer<T = any> {
  /** the HTTP status */
  status: number;
  /** status below 300 */
  ok: boolean;
  /** the body: parsed JSON, else its text */
  body: T;
}

/** What a console page reads through: the HTTP API, as the signed-in user, in their company and language. */
export interface PageApi {
  /** GETs an API path ("/api/pm/projects?size=10") as the user: a refusal is an answer (ok false), not a throw */
  get<T = any>(url: string): Promise<PageAnswer<T>>;
  /**
   * The module's interface text `key` (PluginModule.texts) in the user's language, `{name}` replaced by values' name;
   * a key the module has no text for answers `fallback` (a value added to an enum later still reads as a word), else the key.
   */
  text(key: string, values?: Record<string, string | number>, fallback?: string): string;
}

/** An error a console page throws to be shown as the console's problem page with this status. */
export function pageError(status: number, message: string): Error {
  return Object.assign(new Error(message), { statusCode: status });
}

/** "Title: detail" of a problem answer, for an alert or a problem page. */
export function problemText(body: unknown): string {
  const p = (body ?? {}) as { title?: string; detail?: string };
  return p.detail ? `${p.title ?? 'Refused'}: ${p.detail}` : (p.title ?? 'The request was refused.');
}

/** The body of an answer the page cannot be drawn without: a refusal (4xx) becomes the page's own problem page, with the API's status. */
export function required<T>(res: PageAnswer<T>): T {
  if (res.ok) return res.body;
  throw pageError(res.status >= 400 && res.status < 500 ? res.status : 500, problemText(res.body));
}

/** JSON for a page's <script type="application/json">: every `<` escaped, so no value can close the tag. */
export const scriptJson = (data: unknown): string => JSON.stringify(data).replace(/</g, '\\u003c');

/**
 * A page of the web console a module draws itself (a dashboard, a board), at
 * the web path of one of its manifest's menu entries, or below one with
 * parameters (/pm/projects/:id/board: a page of one project, linked from the
 * project's detail page). It reads through the API as the user, so it shows
 * only what the user may read; the console puts its HTML in the layout with
 * the menu. Its scripts (plugins/<module>/assets/, at /console/modules/<module>/)
 * change data through plinth.api (the console's relay to the API).
 */
export interface ConsolePage {
  /** the page's handlebars template, a file of the module: new URL('./views/x.hbs', import.meta.url) */
  view: URL;
  /** heading and link text, in English; default: the menu entry's label. Its key in the module's texts is "page" + the path with dots (page.pm.projects.:id.board) */
  title?: string;
  /** the template's data, read through `api`; `query` is the page's query string, `params` its path parameters */
  load(api: PageApi, query: Record<string, string | undefined>, params: Record<string, string>): Promise<Record<string, unknown>>;
}

/**
 * What a module's code exports from plugins/<id>/index.ts, each part optional: only what its manifest cannot
 * say. Everything in it gets a ModuleContext and imports nothing from core but core/plugin-api.ts.
 */
export interface PluginModule {
  /** custom routes' code by handler name, as the manifest's routes name it (`"handler": "convertLead"`); each handler has its own schemas */
  handlers?: Record<string, PluginHandler<any>>;
  /** by entity; a list runs each set in turn (rules of one entity kept in several files) */
  hooks?: Record<string, EntityHooks | EntityHooks[]>;
  /** by name; a custom route accepts one with `"auth": "<name>"` */
  authenticators?: Record<string, Authenticator>;
  /** by name, unique in the module */
  subscribers?: Record<string, Subscriber>;
  /** by name; enqueued as "<module>.<name>" (ctx.enqueue) */
  jobs?: Record<string, JobDefinition>;
  /** console pages by web path: a menu entry's path of the manifest, or one below it (/pm/projects/:id/board) */
  pages?: Record<string, ConsolePage>;
  /**
   * The module's interface strings beyond its manifest's labels (its pages' and scripts' texts):
   * a JSON file of key → built-in English, new URL('./texts.en.json', import.meta.url). They are
   * keys of the module's namespace that tenants translate like the labels ({{t "key"}} in its
   * views, api.text in load()); "menu.", "entity.", "field." and "page." keys are the manifest's.
   */
  texts?: URL;
}
