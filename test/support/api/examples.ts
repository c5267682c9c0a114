// Valid values from the document's schemas, deterministic for a seed: enums,
// patterns, formats and lengths honoured, a transition field in its initial
// state, and every free text carrying a marker, so a response that shows one
// of these rows to someone else gives itself away by that marker.
import fc from 'fast-check';
import type { Api, Schema } from './describe.ts';

export interface ValueContext {
  /** lower-case letters and digits, starting with a letter */
  marker: string;
  seed: number;
  /** the entity a body belongs to (its refs and transitions) */
  entity?: string;
  /** the id a reference field gets; undefined leaves an optional field out */
  ref(entity: string | undefined, field: string): string | undefined;
  /** numbers the free texts, so unique fields stay unique */
  counter: { n: number };
}

const chars = (v: string) => [...v].length;

function textFor(s: Schema, ctx: ValueContext): string {
  const n = ++ctx.counter.n;
  const fits = (v: string) => chars(v) <= (s.maxLength ?? 1e9) && chars(v) >= (s.minLength ?? 0);
  const re = s.pattern ? new RegExp(s.pattern, 'u') : undefined;
  // (a language tag last, en-<the marker and number in subtags of up to 8>: rows with markers of their own differ there too)
  const tag = `en-${`${ctx.marker}${n}`.match(/.{1,8}/g)!.join('-')}`.replace(/-(.)$/, '-$1x');
  const candidates = [`${ctx.marker}${n}`, `${ctx.marker}${n}@example.test`, `${ctx.marker}${n}.example.test`, `${ctx.marker.toUpperCase()}${n}`, '0.19', '12.5', '7', tag];
  const hit = candidates.find((c) => fits(c) && (!re || re.test(c)));
  if (hit) return hit;
  if (re) return fc.sample(fc.stringMatching(re).filter(fits), { seed: ctx.seed + n, numRuns: 1 })[0];
  return `${ctx.marker}${n}`.slice(0, s.maxLength).padEnd(s.minLength ?? 0, 'x');
}

/** One valid value; `full`: every optional property too (else only the required ones). */
export function exampleOf(api: Api, schema: Schema, ctx: ValueContext, name = '', full = true): unknown {
  const s = api.resolve(schema);
  if (s.anyOf) {
    const options = (s.anyOf as Schema[]).map(api.resolve).filter((o) => o.type !== 'null');
    return options.length ? exampleOf(api, options[0], ctx, name, full) : null;
  }
  const tr = ctx.entity ? api.model(ctx.entity)?.transitions : undefined;
  if (tr && name === tr.field && s.enum) return tr.initial.find((v) => !tr.reserved?.includes(v)) ?? tr.initial[0];
  if (s.enum) return s.enum[ctx.counter.n++ % s.enum.length];
  const type = Array.isArray(s.type) ? s.type.find((x: string) => x !== 'null') : s.type;
  switch (type) {
    case 'boolean':
      return true;
    case 'integer':
    case 'number':
      return Math.min(Math.max(7, s.minimum ?? -Infinity), s.maximum ?? Infinity);
    case 'string':
      if (s.format === 'uuid') return ctx.ref(api.refTarget(ctx.entity, name), name);
      if (s.format === 'date') return '2025-03-14';
      if (s.format === 'date-time') return '2025-03-14T09:26:53.000Z';
      if (s.format === 'email') return `${ctx.marker}${++ctx.counter.n}@example.test`;
      if (s.format === 'uri') return `https://${ctx.marker}${++ctx.counter.n}.example.test/hook`;
      // write-only values (passwords, secrets) are distinctive too: no answer may ever show one
      if (s.writeOnly) {
        const plain = `Wo-${ctx.marker}${++ctx.counter.n}`.padEnd(s.minLength ?? 0, 'x');
        return !s.pattern || new RegExp(s.pattern, 'u').test(plain) ? plain : textFor(s, ctx);
      }
      // a text whose content means something (a cron expression, a translation's key): the document's own
      // example; not a decimal string's, which ignores the field's bounds (textFor picks a small one)
      if (typeof s.examples?.[0] === 'string' && (!s.pattern || (new RegExp(s.pattern, 'u').test(s.examples[0]) && !/^-?\d/.test(s.examples[0])))) return s.examples[0];
      return textFor(s, ctx);
    case 'array': {
      // a list whose entries mean something (event patterns): the document's own example
      if (Array.isArray(s.examples?.[0])) return s.examples[0];
      const one = exampleOf(api, s.items ?? {}, ctx, name.replace(/s$/, ''), full);
      return one === undefined ? [] : [one];
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        // translatable fields are given as plain strings; the translations map is the fuzz's business
        if (k === 'translations' || (!full && !(s.required ?? []).includes(k))) continue;
        const value = exampleOf(api, v as Schema, ctx, k, full);
        if (value !== undefined) out[k] = value;
      }
      return out;
    }
    // free JSON: null is valid wherever it is optional, and a role's permission list must name real codes
    default:
      return full ? null : {};
  }
}

export const newMarker = (seed: number, tag: string) => `${tag}${(seed >>> 0).toString(36)}`.toLowerCase().replace(/[^a-z0-9]/g, '');
