// One operation × one caller: the same request twice, once naming the victim's
// rows (path ids, uuid filters, body references, a search for the victim's
// text, the victim's refresh token) and once naming unknown ones (random
// UUIDv7s, random text of the same length). Both answers are checked against
// the contract; then against each other (status, code and body, minus
// requestId/instance and the values that differ by construction), and for the
// victim's ids and texts the request did not carry.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { fillPath, type ApiOperation, type Schema } from '../api/describe.ts';
import { exampleOf } from '../api/examples.ts';
import { contractBreach, cut } from '../api/oracle.ts';
import type { Scene } from './scene.ts';
import type { Expectation, Variant } from './variants.ts';

/** A small seeded generator (mulberry32): the matrix's unknown ids and texts are reproducible. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** A UUIDv7: the time now, the rest from the seeded generator. */
function uuidv7(rand: () => number): string {
  const ms = Date.now();
  const b = Array.from({ length: 16 }, (_, i) => (i < 6 ? Math.floor(ms / 2 ** (8 * (5 - i))) & 0xff : Math.floor(rand() * 256)));
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface Answer {
  status: number;
  code?: string;
  body: string;
}
export interface Probe {
  victim: Answer;
  unknown: Answer;
  expected: Expectation;
  problems: string[];
  request: string;
}

const answer = (res: LightMyRequestResponse): Answer => {
  let code: string | undefined;
  try {
    code = res.statusCode >= 400 ? res.json().code : undefined;
  } catch {
    /* not JSON: the contract check says so */
  }
  return { status: res.statusCode, code, body: res.body };
};

/** The body as compared: no requestId or instance, the twin's differing values replaced by their position. */
function normalised(body: string, values: string[]): string {
  let text = body;
  try {
    const json = JSON.parse(body);
    if (json && typeof json === 'object') {
      delete json.requestId;
      delete json.instance;
    }
    text = JSON.stringify(json);
  } catch {
    /* compared as it is */
  }
  values.forEach((v, i) => {
    text = text.split(v).join(`<${i}>`);
  });
  return text;
}

export async function probe(app: FastifyInstance, s: Scene, op: ApiOperation, v: Variant, rand: () => number): Promise<Probe> {
  // [victim's value, unknown twin]: the only differences between the two requests
  const pairs: Array<[string, string]> = [];
  const pair = (victim: string, twin: () => string) => {
    if (!pairs.some(([x]) => x === victim)) pairs.push([victim, twin()]);
    return victim;
  };
  const unknownId = () => uuidv7(rand);
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');

  const rows = v.ownPath ? v.mirror(s) : s.victim;
  const row = op.idParam ? rows.first(op.entity!) : undefined;
  const path = fillPath(
    op.path,
    Object.fromEntries(
      op.pathParams.map((p) => {
        const entity = op.addresses[p];
        if (v.ownPath) return [p, row?.pathValues[p] ?? rows.first(entity)?.id ?? ''];
        const value = entity === 'Tenant' ? pair(s.V.id, () => `t-${hex(10)}`) : pair(row?.pathValues[p] ?? s.victim.first(entity)?.id ?? s.V.companyId, unknownId);
        return [p, value];
      }),
    ),
  );

  const query =
    op.method === 'GET'
      ? op.params
          .filter((p) => p.in === 'query')
          .flatMap((p) => {
            const target = p.schema.format === 'uuid' ? s.api.refTarget(op.entity, p.name) : undefined;
            const id = target && s.victim.first(target)?.id;
            if (id) return [`${p.name}=${pair(id, unknownId)}`];
            const scope = s.api.model(op.entity ?? '')?.scope === 'company' ? 'c' : 't';
            if (p.name === 'search') return [`search=${pair(`${s.victim.marker}${scope}`, () => `zq${hex(s.victim.marker.length - 1)}`)}`];
            // a text filter with the victim's own value of that field (an audit record's entityId, a company's code)
            const field = s.api.model(op.entity ?? '')?.byName.get(p.name);
            const own = s.victim.first(op.entity ?? '')?.body[p.name];
            // (distinctive values a URL carries as they are, so the twin swaps them by plain replacement, and nothing else)
            const distinctive = typeof own === 'string' && /^[\w.-]+$/.test(own) && (/^[0-9a-f-]{36}$/.test(own) || own.includes(s.victim.marker));
            if ((field?.type === 'string' || field?.type === 'text') && distinctive) {
              return [`${p.name}=${pair(own, () => (/^[0-9a-f-]{36}$/.test(own) ? unknownId() : `zq${hex(own.length - 2)}`))}`];
            }
            return [];
          })
          .join('&')
      : '';

  let victimRefs = false;
  let body: string | undefined;
  if (op.body) {
    const own = v.mirror(s);
    // texts of its own in each twin: a unique value taken by the first is no reason for the second to fail
    // eight characters: a language tag carries it whole as one subtag (examples.ts), so the twin swaps it there too
    const marker = pair(`fr${hex(6)}`, () => `fr${hex(6)}`);
    const value = exampleOf(s.api, op.body, {
      marker,
      seed: Math.floor(rand() * 1e9),
      entity: op.entity,
      counter: { n: 0 },
      // where the path names the victim's row, the body names the caller's own rows; else the victim's, where foreign to the caller
      ref: (target) => {
        if (!target) return undefined;
        if ((addressedBy(op) && !v.ownPath) || !v.foreign?.(s, target)) return own.first(target)?.id;
        const id = s.victim.first(target)?.id;
        if (id) victimRefs = true;
        return id && pair(id, unknownId);
      },
    }) as Record<string, unknown>;
    if (refreshTokenField(op.body, s)) value.refreshToken = pair(s.victimRefreshToken, () => `${s.V.id}.${hex(43)}`);
    body = JSON.stringify(value);
  }

  const token = v.token(s, op);
  const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(v.headers?.(s) ?? {}), ...(body ? { 'content-type': 'application/json' } : {}) };
  const url = `${path}${query ? `?${query}` : ''}`;
  const twin = (text: string) => pairs.reduce((t, [x, y]) => t.split(x).join(y), text);
  const send = (u: string, b?: string) => app.inject({ method: op.method, url: u, headers, ...(b !== undefined ? { payload: b } : {}) } as InjectOptions);
  const [resV, resU] = [await send(url, body), await send(twin(url), body && twin(body))];
  const victim = answer(resV);
  const unknown = answer(resU);
  const expected = v.expect(op, victimRefs);
  const request = `${op.method} ${url}${body ? ` ${cut(body, 300)}` : ''}`;
  const sent = (u: string, b?: string) => `${u} ${decodeURIComponent(u)} ${JSON.stringify(headers)} ${b ?? ''}`;

  const problems: string[] = [];
  for (const [res, label, u, b] of [
    [resV, 'victim', url, body],
    [resU, 'unknown', twin(url), body && twin(body)],
  ] as const) {
    const breach = contractBreach(res, sent(u, b));
    if (breach) problems.push(`${label} answer breaks the contract: ${breach}: ${cut(res.body, 300)}`);
  }
  // the victim's ids and texts the request itself did not carry
  const leaked = v.needles(s).filter((n) => resV.body.includes(n) && !sent(url, body).includes(n));
  if (leaked.length) problems.push(`victim data in the answer: ${leaked.join(', ')}: ${cut(resV.body, 400)}`);
  const leakedU = v.needles(s).filter((n) => resU.body.includes(n) && !sent(twin(url), body && twin(body)).includes(n));
  if (leakedU.length) problems.push(`victim data in the answer for unknown ids: ${leakedU.join(', ')}: ${cut(resU.body, 400)}`);
  // with nothing of the victim's in it the twin is the same request: nothing to compare (sizes, say, may move between two reads)
  if (v.compare && (twin(url) !== url || (body !== undefined && twin(body) !== body))) {
    // two creates that both succeed made two rows: only their statuses compare
    const bothWritten = victim.status < 300 && unknown.status < 300 && op.method !== 'GET';
    const [a, b] = bothWritten
      ? [String(victim.status), String(unknown.status)]
      : [
          normalised(
            resV.body,
            pairs.map(([x]) => x),
          ),
          normalised(
            resU.body,
            pairs.map(([, y]) => y),
          ),
        ];
    if (victim.status !== unknown.status || a !== b) problems.push(`the victim's row answers differently from an unknown one: ${victim.status} ${cut(a, 300)} vs ${unknown.status} ${cut(b, 300)}`);
  }
  return { victim, unknown, expected, problems, request };
}

const addressedBy = (op: ApiOperation) => op.pathParams.length > 0;
const refreshTokenField = (schema: Schema, s: Scene) => 'refreshToken' in (s.api.resolve(schema).properties ?? {});

/** Does an answer meet the expectation? */
export function meets(a: Answer, e: Expectation): boolean {
  if (e.kind === 'problem') return a.status === e.status && a.code === e.code;
  if (e.kind === 'refused') return a.status >= 400 && a.status < 500;
  return a.status < 500;
}
