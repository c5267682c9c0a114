// One operation's requests: each part (path ids, query, headers, caller, body)
// has a clean arbitrary drawn from the document and the world's real rows, and a
// dirty one; a request breaks at most one part, so the fault reaches the code
// behind the parts that are still valid. Rows come from the pool when the request
// is generated, so the fuzz follows its own creates and deletes.
import fc from 'fast-check';
import { fillPath, type ApiOperation, type Parameter } from '../api/describe.ts';
import { enc, fromSchemas, junkString, type Body, type Refs } from './arbitraries.ts';
import type { Caller, World } from './world.ts';

export type Fault = 'none' | 'body' | 'query' | 'headers' | 'path' | 'auth';
export interface FuzzRequest {
  fault: Fault;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  caller: Caller;
  token?: string;
  body?: Body;
  /** public routes: a client address of its own, so failed logins lock no address the world's callers log in from */
  remoteAddress?: string;
}
interface Parts<T> {
  clean: fc.Arbitrary<T>;
  dirty: fc.Arbitrary<T>;
}

const pick = <T>(items: () => T[], none: fc.Arbitrary<T>) =>
  fc.nat({ max: 1_000_000 }).chain((i) => {
    const all = items();
    return all.length ? fc.constant(all[i % all.length]) : none;
  });

export function requestsFor(world: World) {
  const { api, pool, elsewhere, a, b } = world;
  const ids = (entity: string) => () => (pool.get(entity) ?? []).map((r) => r.id);
  const refs: Refs = (entity) =>
    entity && (pool.has(entity) || elsewhere.has(entity))
      ? fc.oneof({ weight: 8, arbitrary: pick(ids(entity), fc.uuid()) }, { weight: 1, arbitrary: pick(() => elsewhere.get(entity) ?? [], fc.uuid()) }, { weight: 1, arbitrary: fc.uuid() })
      : undefined;
  const schemas = fromSchemas(api, refs);

  // never a live tenant of this world: the operator would suspend the callers' own
  const elsewhereOf = (entity: string) => (entity === 'Tenant' ? ['platform', a.id.toUpperCase(), 't-0000000000'] : (elsewhere.get(entity) ?? []));
  function pathOf(op: ApiOperation): Parts<string> {
    if (!op.pathParams.length) return { clean: fc.constant(op.path), dirty: fc.constant(op.path) };
    const clean: fc.Arbitrary<Record<string, string>> = op.idParam
      ? pick(
          () => (pool.get(op.entity!) ?? []).map((r) => r.pathValues),
          fc.uuid().map((id) => ({ [op.idParam!]: id })),
        ).chain((v) => fc.record(Object.fromEntries(op.pathParams.map((p) => [p, v[p] ? fc.constant(v[p]) : fc.uuid()]))))
      : fc.record(Object.fromEntries(op.pathParams.map((p) => [p, op.addresses[p] === 'Tenant' ? pick(() => world.tenantIds, fc.constant(a.id)) : pick(ids(op.addresses[p] ?? ''), fc.uuid())])));
    const sample = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    const bad = (p: string) =>
      fc.oneof(
        { weight: 2, arbitrary: pick(() => elsewhereOf(op.addresses[p] ?? ''), fc.uuid()) },
        { weight: 1, arbitrary: fc.uuid() },
        {
          weight: 2,
          arbitrary: fc
            .oneof(junkString, fc.constantFrom('0', '-1', 'null', '..', '%2e%2e', sample.toUpperCase(), `${sample}x`, sample.replace(/-/g, ''), 'a'.repeat(201), '%00', ' '))
            .filter((s) => s.length > 0)
            .map(enc),
        },
      );
    return {
      clean: clean.map((v) => fillPath(op.path, v)),
      dirty: fc.tuple(clean, fc.constantFrom(...op.pathParams)).chain(([v, p]) => bad(p).map((x) => fillPath(op.path, { ...v, [p]: x }))),
    };
  }

  const headerJunk = fc.oneof(
    fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
    fc.constantFrom(
      '',
      '*',
      ' ',
      ';;,,',
      'x'.repeat(5000),
      'de;q=abc, *;q=0',
      'en-US,en;q=0.9,de;q=0.8',
      'W/"1"',
      '"1", "2"',
      '*, "1"',
      '"999999999999999999999"',
      '"-1"',
      '"1.5"',
      '1',
      'zz-ZZZZZZZZZ',
      'de-DE-x-private-subtag',
      'EN',
      'i-klingon',
    ),
  );
  function headersOf(op: ApiOperation): Parts<Record<string, string>> {
    const params: Parameter[] = op.params.filter((p) => p.in === 'header');
    // every authenticated route resolves a company context, declared or not
    if (op.auth !== 'public' && !params.some((p) => p.name === 'x-company-id')) params.push({ name: 'x-company-id', in: 'header', schema: { type: 'string', format: 'uuid' } });
    const clean = (p: Parameter): fc.Arbitrary<string> =>
      p.name === 'x-company-id'
        ? fc.constantFrom(a.companyId, a.companyId.toUpperCase())
        : p.name.endsWith('-language')
          ? fc.constantFrom('en', 'de', 'fr', 'de-CH', 'pt-BR', 'de;q=0.5, en;q=0.9', '*')
          : p.name === 'if-match'
            ? fc.constant('"1"')
            : schemas.valueOf(p.schema).map(String);
    const dirty = (p: Parameter): fc.Arbitrary<string> =>
      p.name === 'x-company-id'
        ? fc.oneof(fc.constantFrom(world.second, world.foreign, b.companyId), fc.uuid(), headerJunk)
        : p.name === 'if-match'
          ? fc.oneof(
              fc.integer({ min: 0, max: 3 }).map((v) => `"${v}"`),
              headerJunk,
            )
          : headerJunk;
    const record = (each: (p: Parameter) => fc.Arbitrary<string>) => fc.record(Object.fromEntries(params.map((p) => [p.name, each(p)])), { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>;
    // platform routes work in no company: the operator's own context only
    const usable = op.auth === 'platform' ? params.filter((p) => p.name !== 'x-company-id') : params;
    return {
      clean: record((p) => (p.name === 'if-match' || (op.auth === 'platform' && p.name === 'x-company-id') ? fc.constant('') : clean(p))).map((h) =>
        Object.fromEntries(Object.entries(h).filter(([, v]) => v)),
      ),
      dirty: usable.length
        ? fc
            .tuple(record(clean), fc.constantFrom(...usable.map((p) => p.name)), fc.boolean())
            .chain(([h, name, also]) => fc.tuple(dirty(usable.find((p) => p.name === name)!), also ? record(dirty) : fc.constant({})).map(([v, more]) => ({ ...h, ...more, [name]: v })))
        : fc.constant({ 'accept-language': 'x'.repeat(5000) }),
    };
  }

  function callersOf(op: ApiOperation): Parts<[Caller, string | undefined]> {
    const t = world.tokens;
    const as = (c: Exclude<Caller, 'forged'>) => fc.constant<[Caller, string | undefined]>([c, t[c]]);
    const main = op.auth === 'platform' ? 'operator' : op.auth === 'public' ? 'none' : 'admin';
    return {
      clean: as(main),
      dirty: fc.oneof(
        ...(['admin', 'viewer', 'noRole', 'none', 'otherTenant'] as const).filter((c) => c !== main).map(as),
        fc.constantFrom(...world.forged).map((tok) => ['forged', tok] as [Caller, string]),
      ),
    };
  }

  /** Bodies of the kernel's public routes are made of what only the world knows: credentials, live refresh tokens. */
  function validBody(op: ApiOperation): fc.Arbitrary<Record<string, unknown>> | undefined {
    const live = pick(() => world.refreshTokens, fc.constant(`${a.id}.${'x'.repeat(43)}`));
    if (op.id === 'authLogin')
      return fc.oneof(
        fc.constantFrom(...world.credentials),
        fc.constantFrom(...world.credentials).map((c) => ({ ...c, email: c.email.toUpperCase() })),
      );
    if (op.id === 'authRefresh') return live.map((refreshToken) => ({ refreshToken }));
    if (op.id === 'authLogout') return fc.option(live, { nil: undefined }).map((r) => (r ? { refreshToken: r } : {}));
    // a create mostly starts in an initial state, so a valid body gets past the transition check to the database
    const tr = op.kind === 'create' && op.body ? api.model(op.entity!)?.transitions : undefined;
    if (tr) {
      const any = schemas.valueOf(op.body!, '', false, op.entity) as fc.Arbitrary<Record<string, unknown>>;
      return fc.oneof({ weight: 3, arbitrary: fc.tuple(any, fc.constantFrom(...tr.initial)).map(([v, s]) => ({ ...v, [tr.field]: s })) }, any);
    }
    return undefined;
  }

  /** Requests of one operation: clean or with exactly one part broken. */
  function arbitrary(op: ApiOperation): fc.Arbitrary<FuzzRequest> {
    const parts = {
      path: pathOf(op),
      query: schemas.queryOf(
        op.params.filter((p) => p.in === 'query'),
        op.entity,
      ),
      headers: headersOf(op),
      auth: callersOf(op),
      body: op.body ? schemas.bodyOf(op.body, op.entity, validBody(op)) : undefined,
    };
    const faults: Array<{ weight: number; arbitrary: fc.Arbitrary<Fault> }> = [
      { weight: 3, arbitrary: fc.constant('none') },
      { weight: op.body ? 5 : 0, arbitrary: fc.constant('body') },
      { weight: 1, arbitrary: fc.constant('query') },
      { weight: 2, arbitrary: fc.constant('headers') },
      { weight: op.pathParams.length ? 2 : 0, arbitrary: fc.constant('path') },
      { weight: 1, arbitrary: fc.constant('auth') },
    ];
    const side = (part: Fault, fault: Fault) => (part === fault ? 'dirty' : 'clean');
    return fc
      .oneof(...faults.filter((f) => f.weight > 0))
      .chain((fault) =>
        fc.record({
          fault: fc.constant(fault),
          method: fc.constant(op.method),
          path: parts.path[side('path', fault)],
          query: parts.query[side('query', fault)],
          headers: parts.headers[side('headers', fault)],
          auth: parts.auth[side('auth', fault)],
          ...(parts.body ? { body: parts.body[side('body', fault)] } : {}),
          ...(op.auth === 'public' ? { remoteAddress: fc.tuple(fc.nat(255), fc.nat(255)).map(([x, y]) => `10.9.${x}.${y}`) } : {}),
        }),
      )
      .map(({ auth: [caller, token], ...rest }) => ({ ...rest, caller, ...(token ? { token } : {}) }) as FuzzRequest);
  }

  return { arbitrary, schemas, refs };
}
