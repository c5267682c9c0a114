// Every 2xx answer an attack suite receives, held to what the OpenAPI document
// promises for its operation and status: a JSON body to the response schema
// (JSON Schema 2020-12, OpenAPI 3.1's dialect, formats checked), any other body
// (CSV, a file) to its media type only, and a status the operation does not
// document at all is a breach too. A suite watches its app's inject, so every
// request it sends is checked, as whichever caller sent it, and reports each
// distinct breach once at the end. Validators compile once per operation and status.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import type { Api, ApiOperation } from './describe.ts';
import { cut } from './oracle.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface Reply {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}
interface Documented {
  description?: string;
  content?: Record<string, { schema?: object }>;
}

/** The document's own name in the validator: response schemas are compiled as JSON pointers into it. */
const DOC = 'plinth-openapi';
const escape = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
const mediaOf = (type: unknown) =>
  String(type ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
const isJson = (media: string) => media === 'application/json' || media.endsWith('+json');

class ResponseSchemas {
  readonly #ajv: Ajv2020;
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #routes: Array<{ op: ApiOperation; re: RegExp; params: number }>;

  constructor(api: Api) {
    // strict off: the document carries OpenAPI's own keywords (example, discriminator) beside JSON Schema's;
    // components compiled once and referred to, code unoptimised: compiling is most of the cost, and takes 40 % of the time so
    this.#ajv = addFormats(new Ajv2020({ strict: false, validateSchema: false, inlineRefs: false, code: { optimize: false } }));
    // a file's body is checked by its media type only
    this.#ajv.addFormat('binary', true);
    this.#ajv.addSchema(api.doc as object, DOC);
    // a literal segment wins over a parameter (/api/translations/catalog before /api/translations/{id}), as in the router
    this.#routes = api.ops
      .map((op) => ({ op, re: new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`), params: op.pathParams.length }))
      .sort((x, y) => x.params - y.params);
  }

  /** The documented operation a request reached; HEAD is its GET's. Dot segments are resolved as the server resolves them. */
  operationOf(method: string, url: string): ApiOperation | undefined {
    const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    const path = new URL(url, 'http://localhost').pathname;
    return this.#routes.find((r) => r.op.method === m && r.re.test(path))?.op;
  }

  #validator(op: ApiOperation, status: number, media: string): ValidateFunction {
    const key = `${op.id} ${status} ${media}`;
    let validate = this.#validators.get(key);
    if (!validate) {
      const at = ['paths', op.path, op.method.toLowerCase(), 'responses', String(status), 'content', media, 'schema'].map(escape).join('/');
      validate = this.#ajv.compile({ $ref: `${DOC}#/${at}` });
      this.#validators.set(key, validate);
    }
    return validate;
  }

  /**
   * Why a 2xx answer of an operation breaks the document, or undefined (also for any other status).
   * key: the same breach in another answer (another item of a list, another value).
   */
  breach(op: ApiOperation, method: string, res: Reply): { message: string; key: string } | undefined {
    if (res.statusCode < 200 || res.statusCode >= 300) return undefined;
    const at = `${op.id} answered ${res.statusCode}`;
    const plain = (message: string) => ({ message: `${at}${message}`, key: `${at}${message}` });
    const documented = (op.doc as { responses?: Record<string, Documented> }).responses?.[String(res.statusCode)];
    if (!documented) return plain(', a status it does not document');
    const head = method.toUpperCase() === 'HEAD';
    if (!documented.content) return res.body.length && !head ? plain(' with a body where the document promises none') : undefined;
    const media = mediaOf(res.headers['content-type']);
    if (!(media in documented.content)) return plain(` as ${media || 'no media type'}, not ${Object.keys(documented.content).join(' or ')}`);
    if (head || !isJson(media) || !documented.content[media].schema) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return plain(` ${media} that is not JSON`);
    }
    const validate = this.#validator(op, res.statusCode, media);
    if (validate(body)) return undefined;
    const e = validate.errors![0];
    const rest = `: ${e.message} (${JSON.stringify(e.params)}; schema ${e.schemaPath.replace(/^.*#/, '')})`;
    const message = (path: string) => `${at} outside its response schema at ${path || '/'}${rest}`;
    return { message: message(e.instancePath), key: message(e.instancePath.replace(/\/\d+(?=\/|$)/g, '/*')) };
  }
}

/** Breaches of the document seen so far, each distinct one with its first request and how often it came. */
export class ResponseWatch {
  readonly schemas: ResponseSchemas;
  readonly breaches = new Map<string, { example: string; count: number }>();
  checked = 0;

  constructor(api: Api) {
    this.schemas = new ResponseSchemas(api);
  }

  /** Checks one answer to one request. */
  see(method: string, url: string, payload: unknown, res: Reply): void {
    const op = this.schemas.operationOf(method, url);
    if (!op || res.statusCode < 200 || res.statusCode >= 300) return;
    this.checked++;
    const breach = this.schemas.breach(op, method, res);
    if (!breach) return;
    const seen = this.breaches.get(breach.key);
    if (seen) seen.count++;
    else {
      const sent = payload === undefined ? '' : ` ${cut(typeof payload === 'string' ? payload : JSON.stringify(payload), 300)}`;
      this.breaches.set(breach.key, { example: `${breach.message}\n    ${method} ${cut(url, 200)}${sent}\n    -> ${res.statusCode} ${cut(res.body, 600)}`, count: 1 });
    }
  }

  /** Checks every answer the app gives through inject from now on. */
  watch(app: FastifyInstance): this {
    const inject = app.inject.bind(app) as (o: InjectOptions) => Promise<LightMyRequestResponse>;
    const watched = async (o: InjectOptions) => {
      const res = await inject(o);
      this.see(String(o.method ?? 'GET'), String(o.url ?? o.path ?? ''), o.payload ?? o.body, res);
      return res;
    };
    (app as unknown as { inject: typeof watched }).inject = watched;
    return this;
  }

  report(t: Test): void {
    for (const [key, { example, count }] of this.breaches) t.fail(`the document does not promise this answer: ${key} (${count}x)\n  ${example}`);
    t.ok(this.checked > 0, `${this.checked} 2xx answers checked against the document, ${this.breaches.size} distinct breaches`);
  }
}
