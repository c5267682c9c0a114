// The happy path, deep: for an entity with generated CRUD, a wholly valid
// create (references to real rows, its state field in an initial state), then
// the row read back, a stale and a current If-Match on PATCH and PUT, a stale
// and a current delete, and the row gone. Domain refusals a valid document body
// can still meet (a unique value taken, a state lock, a computed value too
// large) end a chain; anything else that differs from the contract is a breach.
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { fillPath, type ApiOperation } from '../api/describe.ts';
import { readPath } from '../api/dataset.ts';
import { fromSchemas } from './arbitraries.ts';
import type { Recorder } from './recorder.ts';
import type { FuzzRequest } from './requests.ts';

const pick = <T>(items: () => T[], none: fc.Arbitrary<T>) =>
  fc.nat({ max: 1_000_000 }).chain((i) => {
    const all = items();
    return all.length ? fc.constant(all[i % all.length]) : none;
  });
/** Answers a valid body may still get: taken unique values, locked states, a computed value its column cannot hold, rows a module's rule will not combine (a status of another project). */
const DOMAIN = new Set(['CONFLICT', 'STATE_LOCKED', 'VALIDATION_FAILED', 'UNPROCESSABLE']);

export interface Chains {
  entity: string;
  attempts: number;
  completed: number;
}

export async function lifecycle(rec: Recorder, entity: string, runs: number, seed: number): Promise<Chains> {
  const { api, pool } = rec.world;
  const ops = (kind: ApiOperation['kind']) => api.ops.find((o) => o.entity === entity && o.kind === kind);
  const [create, read, patch, put, del] = [ops('create'), ops('read'), ops('update'), ops('replace'), ops('delete')];
  const out: Chains = { entity, attempts: 0, completed: 0 };
  if (!create?.body || !read || !del) return out;
  // only real rows of the caller's company: a chain is about what succeeds
  const schemas = fromSchemas(api, (target) => (target && pool.has(target) ? pick(() => (pool.get(target) ?? []).map((r) => r.id), fc.uuid()) : undefined));
  const tr = api.model(entity)?.transitions;
  const valid = (op: ApiOperation | undefined, initial: boolean) =>
    op?.body
      ? (schemas.valueOf(op.body, '', true, entity) as fc.Arbitrary<Record<string, unknown>>)
          .map((v) => {
            const c = { ...v };
            if (tr) {
              if (initial) c[tr.field] = tr.initial.find((s) => !tr.reserved?.includes(s)) ?? tr.initial[0];
              else delete c[tr.field];
            }
            return c;
          })
          .filter((v) => Object.keys(v).length > 0)
      : fc.constant(undefined);
  const parents = fc.record(Object.fromEntries(create.pathParams.map((p) => [p, pick(() => (pool.get(create.addresses[p]) ?? []).map((r) => r.id), fc.uuid())])));
  const arb = fc.record({ body: valid(create, true), patch: valid(patch, false), put: valid(put, false), parents });

  const send = (name: string, method: string, path: string, body: unknown, extra: Record<string, string> = {}) => {
    const req: FuzzRequest = {
      fault: 'none',
      method,
      path,
      query: '',
      caller: 'admin',
      token: rec.world.tokens.admin,
      headers: extra,
      ...(body !== undefined ? { body: { text: JSON.stringify(body), type: 'application/json' } } : {}),
    };
    return rec.send(`${entity} lifecycle: ${name}`, req).then((res) => ({ req, res }));
  };
  const fail = (step: string, x: { req: FuzzRequest; res: { statusCode: number; body: string } }, why: string) =>
    rec.note(`${entity} lifecycle`, `${step}: ${why}`, `${x.req.method} ${x.req.path} ${x.req.body?.text ?? ''}\n    -> ${x.res.statusCode} ${x.res.body.slice(0, 400)}`);
  const refused = (x: { res: { statusCode: number; json(): any } }) => x.res.statusCode >= 400 && x.res.statusCode < 500 && DOMAIN.has(x.res.json().code);
  const tag = (x: { res: { headers: Record<string, unknown> } }) => String(x.res.headers.etag);
  // JSON objects have no order: a json field reads back in the database's key order
  const same = (x: { res: { body: string } }, y: { res: { body: string } }) => isDeepStrictEqual(JSON.parse(x.res.body), JSON.parse(y.res.body));

  await fc.check(
    fc.asyncProperty(arb, async (c) => {
      out.attempts++;
      const made = await send('create', 'POST', fillPath(create.path, c.parents as Record<string, string>), c.body);
      if (made.res.statusCode !== 201) {
        if (!refused(made)) fail('create', made, 'a valid create was neither 201 nor a domain refusal');
        return true;
      }
      const row = made.res.json();
      const url = fillPath(read.path, readPath(api, entity, row.id, { ...row, ...c.parents }));
      if (made.res.headers.location !== url) fail('create', made, `Location ${made.res.headers.location}, not ${url}`);
      if (tag(made) !== '"1"') fail('create', made, `ETag ${tag(made)}, not "1"`);
      let current = made;
      const readBack = async (after: string) => {
        const got = await send('read', 'GET', url, undefined);
        if (got.res.statusCode !== 200 || !same(got, current)) fail('read', got, `does not show the row as the ${after} answered it: ${current.res.body.slice(0, 300)}`);
      };
      await readBack('create');
      for (const [op, body] of [
        [patch, c.patch],
        [put, c.put],
      ] as const) {
        if (!op || !body) continue;
        // PUT names every field, its state too: the one it is in
        if (tr && op.kind === 'replace') body[tr.field] = JSON.parse(current.res.body)[tr.field];
        const stale = await send(`${op.kind} stale`, op.method, url, body, { 'if-match': '"0"' });
        const next = await send(op.kind, op.method, url, body, { 'if-match': tag(current) });
        // the body's own checks may come first: then the stale write fails as the current one does
        const alike = refused(next) && stale.res.statusCode === next.res.statusCode && stale.res.json().code === next.res.json().code;
        if (!alike && (stale.res.statusCode !== 412 || stale.res.json().code !== 'PRECONDITION_FAILED')) fail(op.kind, stale, 'a stale If-Match was not 412 PRECONDITION_FAILED');
        if (next.res.statusCode === 200) {
          // a write that changes nothing keeps the version
          const [v0, v1] = [current, next].map((x) => Number(tag(x).replace(/"/g, '')));
          if (!(v1 === v0 + 1 || (v1 === v0 && same(next, current)))) fail(op.kind, next, `ETag ${tag(next)} after ${tag(current)}`);
          current = next;
          await readBack(op.kind);
        } else if (!refused(next)) fail(op.kind, next, 'a valid write with the current If-Match was neither 200 nor a domain refusal');
      }
      const staleDelete = await send('delete stale', 'DELETE', url, undefined, { 'if-match': '"0"' });
      if (staleDelete.res.statusCode !== 412) fail('delete', staleDelete, 'a stale If-Match was not 412');
      const gone = await send('delete', 'DELETE', url, undefined, { 'if-match': tag(current) });
      if (gone.res.statusCode !== 204) {
        if (!refused(gone)) fail('delete', gone, 'deleting a fresh row was neither 204 nor a domain refusal');
        return true;
      }
      const after = await send('read deleted', 'GET', url, undefined);
      if (after.res.statusCode !== 404 || after.res.json().code !== 'NOT_FOUND') fail('read deleted', after, 'a deleted row is not 404 NOT_FOUND');
      out.completed++;
      return true;
    }),
    { seed, numRuns: runs },
  );
  return out;
}
