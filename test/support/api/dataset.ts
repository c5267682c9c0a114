// Real rows of every entity the API can create, one each, made through the API
// as a given caller: parents before children (the order comes from the uuid
// fields of the create schemas and the path parameters of nested routes), values
// from the create schemas (examples.ts). Rows the API only reads (an audit log)
// are collected from their list afterwards.
import type { FastifyInstance, InjectOptions } from 'fastify';
import { fillPath, type Api, type ApiOperation, type Schema } from './describe.ts';
import { exampleOf } from './examples.ts';

export interface DataRow {
  entity: string;
  id: string;
  version: number;
  /** values of its read route's path parameters */
  pathValues: Record<string, string>;
  /** what created it (for rows the API only reads: the row as listed) */
  body: Record<string, unknown>;
}

export interface Dataset {
  marker: string;
  company?: string;
  rows: DataRow[];
  first(entity: string): DataRow | undefined;
}

/** Entities a create body or nested path refers to: created first. */
function dependencies(api: Api, op: ApiOperation): string[] {
  const out = new Set(Object.values(op.addresses));
  const walk = (schema: Schema, name: string) => {
    const s = api.resolve(schema);
    if (s.anyOf) return s.anyOf.forEach((x: Schema) => walk(x, name));
    if (s.format === 'uuid') {
      const t = api.refTarget(op.entity, name);
      if (t) out.add(t);
    }
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v as Schema, k);
  };
  if (op.body) walk(op.body, '');
  out.delete(op.entity!);
  return [...out];
}

function creationOrder(api: Api): ApiOperation[] {
  const creators = new Map<string, ApiOperation>();
  for (const op of api.ops) if (op.entity && !creators.has(op.entity) && api.creator(op.entity) === op) creators.set(op.entity, op);
  const order: ApiOperation[] = [];
  const seen = new Set<string>();
  const visit = (entity: string, trail: string[]) => {
    if (seen.has(entity) || !creators.has(entity)) return;
    if (trail.includes(entity)) throw new Error(`reference cycle ${[...trail, entity].join(' -> ')}`);
    for (const dep of dependencies(api, creators.get(entity)!)) visit(dep, [...trail, entity]);
    seen.add(entity);
    order.push(creators.get(entity)!);
  };
  for (const entity of creators.keys()) visit(entity, []);
  return order;
}

const versionOf = (res: { headers: Record<string, unknown> }) => Number(String(res.headers.etag ?? '').replace(/"/g, ''));

/** copies: rows per entity; copy i refers to copy i of each parent (so composite unique keys stay unique); a reference to the entity itself (a parent task) stays empty, as it may have to name a row of the same parent. */
export async function buildDataset(app: FastifyInstance, api: Api, o: { token: string; company?: string; marker: string; seed: number; copies?: number }): Promise<Dataset> {
  const rows: DataRow[] = [];
  const first = (entity: string) => rows.find((r) => r.entity === entity);
  const nth = (entity: string, i: number) => {
    const all = rows.filter((r) => r.entity === entity);
    return all[i % all.length] as DataRow | undefined;
  };
  const counter = { n: 0 };
  const headers = { authorization: `Bearer ${o.token}`, ...(o.company ? { 'x-company-id': o.company } : {}) };
  const order = creationOrder(api);
  for (let copy = 0; copy < (o.copies ?? 1); copy++)
    for (const op of order) {
      const entity = op.entity!;
      // texts of company rows and of tenant rows carry markers of their own: another company of the tenant may see the latter
      const marker = `${o.marker}${api.model(entity)?.scope === 'company' ? 'c' : 't'}`;
      const body = (op.body ? exampleOf(api, op.body, { marker, seed: o.seed, entity, counter, ref: (target) => (target && target !== entity ? nth(target, copy)?.id : undefined) }) : {}) as Record<
        string,
        unknown
      >;
      const params = Object.fromEntries(op.pathParams.map((p) => [p, nth(op.addresses[p], copy)?.id ?? '']));
      let res = await app.inject({ method: 'POST', url: fillPath(op.path, params), headers, payload: body } as InjectOptions);
      // a user the module's rules refuse there (an assignee who could not read the task): the caller instead
      const refused = res.statusCode === 422 ? userRefsRefused(api, entity, res.json()) : [];
      if (refused.length) {
        for (const field of refused) body[field] = callerOf(o.token);
        res = await app.inject({ method: 'POST', url: fillPath(op.path, params), headers, payload: body } as InjectOptions);
      }
      if (res.statusCode !== 201) throw new Error(`dataset: ${op.id} ${JSON.stringify(body)} -> ${res.statusCode} ${res.body}`);
      const created = res.json() as Record<string, unknown>;
      rows.push({ entity, id: String(created.id), version: versionOf(res), body, pathValues: readPath(api, entity, String(created.id), { ...created, ...params }) });
    }
  // rows only the API writes (an audit trail of the writes above): read them from their list
  for (const op of api.ops.filter((x) => x.kind === 'list' && !x.pathParams.length && x.entity && !api.creator(x.entity) && api.reader(x.entity))) {
    const res = await app.inject({ method: 'GET', url: `${op.path}?size=1000`, headers });
    if (res.statusCode !== 200) throw new Error(`dataset: ${op.id} -> ${res.statusCode} ${res.body}`);
    for (const item of (res.json() as { items: Record<string, unknown>[] }).items) {
      rows.push({ entity: op.entity!, id: String(item.id), version: Number(item.version ?? 0), body: item, pathValues: readPath(api, op.entity!, String(item.id), item) });
    }
  }
  return { marker: o.marker, company: o.company, rows, first };
}

/** The user reference fields a 422 names. */
function userRefsRefused(api: Api, entity: string, problem: { errors?: { path?: string }[] }): string[] {
  const fields = (problem.errors ?? []).map((e) => String(e.path ?? '').replace(/^\//, ''));
  return fields.filter((f) => f && api.refTarget(entity, f) === 'User');
}

/** The user an access token names. */
const callerOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sub: string }).sub;

/** Path values of an entity's read route for one row: its id, its parents from the row itself. */
export function readPath(api: Api, entity: string, id: string, values: Record<string, unknown>): Record<string, string> {
  const reader = api.reader(entity);
  if (!reader) return { id };
  return Object.fromEntries(reader.pathParams.map((p) => [p, p === reader.idParam ? id : String(values[p])]));
}

/** The URL to read a row back. */
export const readUrl = (api: Api, row: DataRow) => fillPath(api.reader(row.entity)!.path, row.pathValues);
