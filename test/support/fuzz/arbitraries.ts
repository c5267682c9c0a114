// fast-check arbitraries from the OpenAPI schemas (valid values, bodies, query
// strings) and the hostile material a client can send instead: text the
// database cannot store, numbers as strings, deep nesting, huge values, edge
// dates, broken JSON and content types.
import fc from 'fast-check';
import type { Api, Parameter, Schema } from '../api/describe.ts';

export interface Body {
  text: string;
  type?: string;
}

const nest = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deep = (depth: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};
const HUGE = fc.constantFrom(256, 4_001, 20_001, 70_000).chain((n) => fc.constantFrom('x', 'é', '😀', '\u0000').map((c) => c.repeat(n)));
/** Text that is valid JSON but that PostgreSQL cannot store. */
const unstorable = fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udc00\ud800');
const odd = fc.oneof(unstorable, fc.constantFrom('\u202e\u200b', '\ufeff', '%00', "'; drop table x; --", '\\', '"', '%', '_', '${x}', '{{x}}', '\r\n', ' ', '', '😀', 'e\u0301', '\u{10ffff}'));
export const junkString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  odd,
  fc.tuple(fc.string({ maxLength: 10 }), odd).map(([a, b]) => a + b),
  HUGE,
);
const numberAsString = fc.oneof(fc.integer().map(String), fc.double().map(String), fc.constantFrom('1e999', 'NaN', '-0', '0x1F', ' 12 ', '12.500', '1,5', 'true', 'null', '٣'));
/** Dates a format check lets through that a database may still refuse (year 0, leap seconds, far offsets). */
export const EDGE_DATES = ['0000-01-01', '0000-12-31', '0001-01-01', '9999-12-31', '2024-02-29', '1970-01-01'];
export const EDGE_DATETIMES = [
  '0000-01-01T00:00:00Z',
  '0000-06-15T12:00:00.000Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '2016-12-31T23:59:60Z',
  '2024-02-29T12:00:00+14:00',
  '2024-02-29t12:00:00z',
  '2024-01-01T00:00:00.123456789Z',
  '1969-12-31T23:59:59-23:59',
];
const garbage: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  junkString,
  numberAsString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.integer({ min: 30, max: 400 }).map(deep),
  fc.constantFrom(2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, 1e308, -1, 0.5),
  fc.constantFrom(...EDGE_DATES, ...EDGE_DATETIMES, '0000-00-00', '2024-13-01', '-000001-01-01', '+275760-09-13T00:00:00Z'),
);
const RAW_BODIES = [
  '',
  '{',
  '{"a":',
  'null',
  '[]',
  '"x"',
  '0',
  'true',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '\u0000',
  '{"a":"b"}{"a":"c"}',
  nest(5_000),
  `{"name":"${'x'.repeat(1024 * 1024 + 10)}"}`,
  '\ufeff{}',
  '{"name":"\\ud800"}',
  '{"a":"\\u0000"}',
];
const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/problem+json',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/json;',
  'garbage',
];
const LANGUAGES = ['en', 'de', 'fr', 'pt-BR', 'zh-Hant'];

/** Percent-encodes what it can; a lone surrogate goes out as broken bytes, as a hostile client would send it. */
export const enc = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return s.replace(/[^\w-]/g, '%FF');
  }
};

/** refs(entity, field): ids for a uuid field naming rows of an entity (undefined: any uuid). */
export type Refs = (entity: string | undefined, field: string) => fc.Arbitrary<string> | undefined;

export function fromSchemas(api: Api, refs: Refs) {
  function stringOf(s: Schema, name: string, entity?: string): fc.Arbitrary<string> {
    if (s.format === 'uuid') return refs(api.refTarget(entity, name), name) ?? fc.uuid();
    const dates = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });
    if (s.format === 'date') return fc.oneof({ weight: 6, arbitrary: dates.map((d) => d.toISOString().slice(0, 10)) }, { weight: 1, arbitrary: fc.constantFrom(...EDGE_DATES) });
    if (s.format === 'date-time') return fc.oneof({ weight: 6, arbitrary: dates.map((d) => d.toISOString()) }, { weight: 1, arbitrary: fc.constantFrom(...EDGE_DATETIMES) });
    if (s.format === 'email') return fc.emailAddress().filter((v) => v.length <= (s.maxLength ?? 254));
    if (s.format === 'uri') return fc.domain().map((d) => `https://${d}/hook`);
    const max = s.maxLength ?? 100;
    const fits = (v: string) => [...v].length <= max && [...v].length >= (s.minLength ?? 0);
    // a decimal's bounds are the manifest's (the document shows a decimal as a string pattern)
    const field = entity ? api.model(entity)?.byName.get(name) : undefined;
    const inRange = (v: string) => field?.type !== 'decimal' || (Number(v) >= (field.minimum ?? -Infinity) && Number(v) <= (field.maximum ?? Infinity));
    if (s.pattern) {
      const re = new RegExp(s.pattern, 'u');
      const patterned = fc.stringMatching(re).filter((v) => fits(v) && inRange(v));
      // a patterned value that must also name something (a translation's key): mostly the document's examples
      const examples = ((s.examples ?? []) as unknown[]).filter((e): e is string => typeof e === 'string' && re.test(e) && fits(e) && inRange(e));
      return examples.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...examples) }, { weight: 1, arbitrary: patterned }) : patterned;
    }
    const any = fc.string({ unit: 'grapheme', minLength: s.minLength, maxLength: Math.min(max, 60) }).filter(fits);
    // a free text whose content means something (a cron expression): mostly the document's examples
    if (typeof s.examples?.[0] === 'string') return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...(s.examples as string[])) }, { weight: 1, arbitrary: any });
    return any;
  }

  function anyArray(s: Schema, name: string, plain: boolean, entity?: string): fc.Arbitrary<unknown[]> {
    const item = valueOf(s.items ?? {}, name.replace(/s$/, ''), plain, entity);
    return fc.uniqueArray(item, { minLength: s.minItems ?? 0, maxLength: Math.max(3, s.minItems ?? 0), selector: (v) => JSON.stringify(v) });
  }

  /** Any value the schema allows; plain: never null where a value may be given. */
  function valueOf(schema: Schema, name = '', plain = false, entity?: string): fc.Arbitrary<unknown> {
    const s = api.resolve(schema);
    if (s.anyOf) return fc.oneof(...(s.anyOf as Schema[]).filter((x) => !plain || api.resolve(x).type !== 'null').map((x) => valueOf(x, name, plain, entity)));
    if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
    if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).filter((t) => !plain || t !== 'null').map((type) => valueOf({ ...s, type }, name, plain, entity)));
    switch (s.type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: s.minimum ?? -(2 ** 31), max: s.maximum ?? 2 ** 31 - 1 });
      case 'string':
        return stringOf(s, name, entity);
      case 'array':
        // entries that mean something beyond their pattern (event types): mostly the document's examples
        if (Array.isArray(s.examples?.[0])) return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...(s.examples as unknown[])) }, { weight: 1, arbitrary: anyArray(s, name, plain, entity) });
        return anyArray(s, name, plain, entity);
      case 'object': {
        const props = Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, valueOf(v as Schema, k, plain, entity)]));
        const record = fc.record(props, { requiredKeys: s.required ?? [] });
        // free-form maps here are translations (language -> text); keys follow propertyNames where the document has it
        const key = s.propertyNames?.pattern ? fc.stringMatching(new RegExp(s.propertyNames.pattern)) : fc.constantFrom(...LANGUAGES);
        const extra =
          s.additionalProperties && typeof s.additionalProperties === 'object' ? fc.dictionary(key, valueOf(s.additionalProperties), { maxKeys: Math.min(s.maxProperties ?? 3, 3) }) : fc.constant({});
        return fc
          .tuple(record, extra)
          .map(([r, e]) => ({ ...e, ...r }))
          .filter((o) => Object.keys(o).length >= (s.minProperties ?? 0));
      }
      // free JSON (a role's permission codes, a product's attributes)
      default:
        return fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, fc.jsonValue({ maxDepth: 3 }));
    }
  }

  /** Bodies the schema allows (clean) and the ways a client breaks them (dirty). */
  function bodyOf(schema: Schema, entity?: string, valid?: fc.Arbitrary<Record<string, unknown>>): { clean: fc.Arbitrary<Body>; dirty: fc.Arbitrary<Body> } {
    const s = api.resolve(schema);
    const keys = Object.keys(s.properties ?? {});
    const anyKey = keys.length ? fc.constantFrom(...keys) : fc.string({ minLength: 1, maxLength: 8 });
    // free text (and free JSON): where hostile characters get past the schema to the database
    const free = (x: Schema): boolean => {
      const r = api.resolve(x);
      return r.anyOf ? r.anyOf.some(free) : (r.type === 'string' && !r.pattern && !r.format && !r.enum) || r.type === undefined;
    };
    const texts = keys.filter((k) => k !== 'translations' && free(s.properties[k]));
    const good = valid ?? (valueOf(s, '', false, entity) as fc.Arbitrary<Record<string, unknown>>);
    // given valid bodies (real credentials, live tokens) are the base of the broken ones too, so a fault gets past the lookups
    const plain = valid ?? (valueOf(s, '', true, entity) as fc.Arbitrary<Record<string, unknown>>);
    const set = (base: fc.Arbitrary<Record<string, unknown>>, key: fc.Arbitrary<string>, value: fc.Arbitrary<unknown>) => fc.tuple(base, key, value).map(([v, k, x]) => ({ ...v, [k]: x }));
    const json = (v: unknown) => JSON.stringify(v) ?? 'null';
    const translatable = Object.keys(api.resolve(s.properties?.translations ?? {}).properties ?? {});
    const broken = fc
      .oneof(
        {
          weight: texts.length ? 2 : 0,
          arbitrary: set(
            plain,
            fc.constantFrom(...(texts.length ? texts : ['x'])),
            fc.tuple(fc.string({ maxLength: 5 }), fc.oneof(unstorable, odd)).map(([p, o]) => p + o),
          ),
        },
        // the hostile piece inside an otherwise valid value, so lengths and lookups still pass
        {
          weight: texts.length ? 3 : 0,
          arbitrary: fc.tuple(plain, fc.constantFrom(...(texts.length ? texts : ['x'])), fc.oneof(unstorable, odd), fc.nat()).map(([v, k, h, i]) => {
            const base = typeof v[k] === 'string' ? (v[k] as string) : '';
            const at = i % (base.length + 1);
            return { ...v, [k]: `${base.slice(0, at)}${h}${base.slice(at)}` };
          }),
        },
        { weight: 3, arbitrary: set(good, anyKey, garbage) },
        {
          weight: translatable.length ? 2 : 0,
          arbitrary: fc
            .tuple(plain, fc.constantFrom(...(translatable.length ? translatable : ['name'])), fc.oneof(junkString, fc.constantFrom(...LANGUAGES)), fc.oneof(odd, junkString, garbage))
            .map(([v, field, lang, text]) => ({ ...v, translations: { [field]: { [lang]: text } } })),
        },
        { weight: 1, arbitrary: set(good, fc.constantFrom('id', 'companyId', 'version', 'createdAt', 'translations', '__proto__', 'constructor'), fc.constantFrom(null, '', 'x', 1, {})) },
        { weight: 1, arbitrary: set(good, fc.string({ minLength: 1, maxLength: 20 }), garbage) },
        {
          weight: keys.length ? 1 : 0,
          arbitrary: fc.tuple(good, fc.constantFrom(...(s.required?.length ? s.required : keys.length ? keys : ['x']))).map(([v, k]) => {
            const c = { ...v };
            delete c[k];
            return c;
          }),
        },
        { weight: 1, arbitrary: good.map((v) => Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'number' || typeof x === 'boolean' ? String(x) : x]))) },
        { weight: 1, arbitrary: garbage },
      )
      .map(json);
    return {
      clean: fc.oneof(good, plain).map((v) => ({ text: json(v), type: 'application/json' })),
      dirty: fc.oneof(
        { weight: 12, arbitrary: broken.map((text) => ({ text, type: 'application/json' })) },
        { weight: 1, arbitrary: fc.tuple(fc.oneof(broken, good.map(json)), fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined)).map(([text, type]) => ({ text, type })) },
        { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((text) => ({ text, type: 'application/json' })) },
      ),
    };
  }

  /** Query strings from the declared parameters (clean), and with junk values, unknown keys and broken encoding (dirty). */
  function queryOf(params: Parameter[], entity?: string): { clean: fc.Arbitrary<string>; dirty: fc.Arbitrary<string> } {
    const validOf = (p: Parameter) => {
      const sortable = /Sortable: (.+)$/.exec(p.description ?? '')?.[1].split(', ');
      return sortable
        ? fc
            .array(
              fc.tuple(fc.boolean(), fc.constantFrom(...sortable)).map(([desc, f]) => `${desc ? '-' : ''}${f}`),
              { minLength: 1, maxLength: 3 },
            )
            .map((a) => a.join(','))
        : valueOf(p.schema, p.name.replace(/(From|To)$/, ''), true, entity).map(String);
    };
    const some = (value: (p: Parameter) => fc.Arbitrary<string>) =>
      params.length
        ? fc
            .tuple(
              ...params.map((p) =>
                fc.option(
                  value(p).map((v) => `${p.name}=${enc(v)}`),
                  { freq: 2 },
                ),
              ),
            )
            .map((parts) => parts.filter((x) => x !== null))
        : fc.constant([] as string[]);
    const junk = fc.oneof(
      fc.tuple(fc.string({ maxLength: 10 }), junkString).map(([k, v]) => `${enc(k)}=${enc(v)}`),
      fc.constantFrom(
        '%',
        '%ZZ',
        '&&',
        '=',
        'a[b]=1',
        'page=1&page=2',
        'size',
        'sort=',
        'search=%00',
        'search=%E0%A4%A',
        'search=%ED%A0%80',
        'translations=de,,fr',
        '__proto__=1',
        'constructor=x',
        'size=1001',
        'page=0',
        'page=99999999999999999999',
      ),
    );
    // a known parameter with an edge value: dates a database refuses, junk, numbers written oddly
    const edge = fc.oneof(junkString, numberAsString, fc.constantFrom(...EDGE_DATES, ...EDGE_DATETIMES));
    return {
      clean: some(validOf).map((parts) => parts.join('&')),
      dirty: fc
        .tuple(
          some((p) => fc.oneof(validOf(p), edge)),
          fc.array(junk, { minLength: params.length ? 0 : 1, maxLength: 2 }),
        )
        .map(([known, extra]) => [...known, ...extra].join('&')),
    };
  }

  return { valueOf, bodyOf, queryOf };
}
