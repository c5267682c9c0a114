// Two Ajv instances: bodies are validated strictly (no type coercion, unknown
// properties rejected, nothing stripped: Fastify's default would turn
// { name: 5, bogus: 1 } into { name: "5" }); query strings, params and headers
// arrive as text and are coerced to the declared types, but only from their
// canonical spelling: Ajv alone would read "0x10", " 5" and "1e1" as numbers.
// Both use the date formats PostgreSQL and Date agree on (date-formats.ts),
// report every fault at once (allErrors) and keep each failing schema on its
// error (verbose): validation-messages.ts words them from it.
import { Ajv, type AnySchema, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { isDate, isDateTime } from './date-formats.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const CANONICAL: Record<string, RegExp> = {
  integer: /^-?(0|[1-9]\d{0,15})$/,
  number: /^-?(0|[1-9]\d{0,15})(\.\d{1,15})?$/,
  boolean: /^(true|false)$/,
};

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Rejects text that is not the canonical spelling of the declared scalar type, then runs Ajv. */
function canonicalText(schema: AnySchema, validate: Validate): Validate {
  const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const checks = Object.entries(props).flatMap(([name, p]) => (typeof p.type === 'string' && CANONICAL[p.type] ? [[name, p.type, CANONICAL[p.type]] as const] : []));
  if (!checks.length) return validate;
  const wrapped: Validate = (data) => {
    const input = data as Record<string, unknown> | undefined;
    const errors: ErrorObject[] = [];
    for (const [name, type, re] of checks) {
      const v = input?.[name];
      if (typeof v === 'string' && !re.test(v)) {
        errors.push({
          instancePath: `/${name}`,
          schemaPath: `#/properties/${name}/type`,
          keyword: 'type',
          params: { type },
          message: `must be ${type === 'boolean' ? 'true or false' : `a plain ${type}`}`,
        });
      }
    }
    if (errors.length) {
      wrapped.errors = errors;
      return false;
    }
    const ok = validate(data);
    wrapped.errors = validate.errors;
    return ok;
  };
  return wrapped;
}

export function installValidators(app: FastifyInstance, shared: () => AnySchema[]): void {
  const make = (coerce: boolean) => {
    const ajv = addFormats(new Ajv({ allErrors: true, verbose: true, strict: false, coerceTypes: coerce, useDefaults: coerce, removeAdditional: false }));
    ajv.addFormat('date', { type: 'string', validate: isDate });
    ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
    for (const s of shared()) ajv.addSchema(s);
    return ajv;
  };
  let body: Ajv | undefined;
  let text: Ajv | undefined;
  // routes share most schemas (ids, item queries, headers): compile each once, and only when
  // first used: compiling every route's schemas up front was most of an app's start-up CPU
  const cache = new Map<string, Validate>();
  const pending = new Set<LazyValidate>();
  app.decorate('compilePendingValidators', () => compileAll(pending));
  app.setValidatorCompiler(({ schema, httpPart, contentType }) => {
    // a multipart body is no object Fastify parsed: its handler reads it as a stream and checks it (files/upload.ts)
    if (httpPart === 'body' && contentType?.startsWith('multipart/')) return () => true;
    const strict = httpPart === 'body';
    const key = `${strict}:${JSON.stringify(schema)}`;
    let validate = cache.get(key);
    if (!validate) {
      const compile = () =>
        strict ? ((body ??= make(false)).compile(schema as AnySchema) as Validate) : canonicalText(schema as AnySchema, (text ??= make(true)).compile(schema as AnySchema) as Validate);
      const lazy = lazily(compile, () => pending.delete(lazy));
      pending.add(lazy);
      validate = lazy;
      cache.set(key, validate);
    }
    return validate;
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Compiles the validators no request has used yet, a few per turn of the
     * event loop, so each route's first request is as fast as the rest and a
     * schema Ajv rejects shows at start, not on its route's first call. The
     * server calls it once it listens; tests, which use few routes, skip it.
     * Resolves to how many it compiled.
     */
    compilePendingValidators(): Promise<number>;
  }
}

type LazyValidate = Validate & { compile(): void };

/** A validator compiled on its first call; Fastify reads `errors` from the function it was given. */
function lazily(compile: () => Validate, compiledNow: () => void): LazyValidate {
  let compiled: Validate | undefined;
  const ready = () => {
    if (!compiled) {
      compiled = compile();
      compiledNow();
    }
    return compiled;
  };
  const validate = ((data: unknown) => {
    const v = ready();
    const ok = v(data);
    validate.errors = v.errors;
    return ok;
  }) as LazyValidate;
  validate.compile = ready;
  return validate;
}

async function compileAll(pending: Set<LazyValidate>): Promise<number> {
  let n = 0;
  for (const validate of [...pending]) {
    validate.compile();
    if (++n % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return n;
}
