// Text no route may take in, refused once for every route before its schema
// runs: PostgreSQL text and jsonb reject U+0000 (22021, 500 otherwise); jsonb
// rejects a lone UTF-16 surrogate ("\ud800", valid JSON but no character),
// which text would silently turn into U+FFFD; very deep JSON exhausts its
// stack. Request headers need no check: Node's parser refuses NUL in them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { httpError, type FieldError } from '../errors.ts';
import { escapePointer } from '../manifest/field-rules.ts';

const MAX_JSON_DEPTH = 32;
const MAX_ERRORS = 10;

function unstorable(s: string): string | undefined {
  if (s.includes('\u0000')) return 'the NUL character (\\u0000)';
  if (!s.isWellFormed()) return 'a lone UTF-16 surrogate';
  return undefined;
}

// the common text has neither NUL nor any surrogate, and one regex test says so
// eslint-disable-next-line no-control-regex -- NUL is what it looks for
const SUSPECT = /[\u0000\ud800-\udfff]/;
const storable = (s: string) => !SUSPECT.test(s) || unstorable(s) === undefined;

/** The hot path: whether `value` is fine, without building a path per key (about half of JSON.parse's time). */
function clean(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return storable(value);
  if (value === null || typeof value !== 'object') return true;
  if (depth > MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!clean(value[i], depth + 1)) return false;
    return true;
  }
  for (const k in value) if (!storable(k) || !clean((value as Record<string, unknown>)[k], depth + 1)) return false;
  return true;
}

/** Where `value` holds text PostgreSQL cannot store, as JSON pointers (at most ten). */
export function unstorableErrors(value: unknown, path = '', depth = 0, out: FieldError[] = []): FieldError[] {
  if (out.length >= MAX_ERRORS) return out;
  if (typeof value === 'string') {
    const fault = unstorable(value);
    if (fault) out.push({ path: path || '/', message: `must not contain ${fault}` });
  } else if (value !== null && typeof value === 'object') {
    if (depth > MAX_JSON_DEPTH) {
      out.push({ path: path || '/', message: `nests deeper than ${MAX_JSON_DEPTH} levels` });
      return out;
    }
    for (const k of Object.keys(value)) {
      const child = `${path}/${escapePointer(k)}`;
      const fault = unstorable(k);
      if (fault) out.push({ path: child, message: `keys must not contain ${fault}` });
      unstorableErrors((value as Record<string, unknown>)[k], child, depth + 1, out);
    }
  }
  return out;
}

const PARTS = ['params', 'querystring', 'body'] as const;

function inputOf(request: FastifyRequest, part: (typeof PARTS)[number]): unknown {
  return part === 'querystring' ? request.query : request[part];
}

/** The check as a preValidation hook: it runs for every route, generated or custom, after parsing. */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    // no route: a 404 whatever the request carries
    if (request.is404) {
      done();
      return;
    }
    for (const part of PARTS) {
      const input = inputOf(request, part);
      if (clean(input, 0)) continue;
      const errors = unstorableErrors(input);
      if (errors.length) {
        done(httpError('VALIDATION_FAILED', `invalid ${part}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors }));
        return;
      }
    }
    done();
  });
}
