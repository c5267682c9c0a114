// Who attacks, and what each must get. A variant names a caller (a token and
// headers), the operations it applies to, and the answer the route's guards
// say it gets: a fixed problem (401, 403 with its code), 404 for a row it
// must not see, any refusal for a body naming rows it must not see, or any
// answer (its own data) as long as nothing of the victim shows.
import type { ApiOperation } from '../api/describe.ts';
import type { Dataset } from '../api/dataset.ts';
import type { Scene } from './scene.ts';

export type Expectation = { kind: 'problem'; status: number; code: string } | { kind: 'refused' } | { kind: 'allowed' };

export interface Variant {
  name: string;
  applies(op: ApiOperation): boolean;
  token(s: Scene, op: ApiOperation): string | undefined;
  headers?(s: Scene): Record<string, string>;
  /** victimRefs: the request's body names rows of the victim */
  expect(op: ApiOperation, victimRefs: boolean): Expectation;
  /** rows the body refers to where the path already names the victim's row: the caller's own */
  mirror(s: Scene): Dataset;
  /** the victim's rows of this entity are none of the caller's business (default: none are) */
  foreign?(s: Scene, entity: string): boolean;
  needles(s: Scene): string[];
  /** the answer for the victim's row must equal the one for an unknown id */
  compare: boolean;
  /** the path names the caller's own row; only the body names the victim's */
  ownPath?: boolean;
}

const problem = (status: number, code: string): Expectation => ({ kind: 'problem', status, code });
const secured = (op: ApiOperation) => op.auth !== 'public';
const platform = (op: ApiOperation) => op.auth === 'platform';
/** the route looks a row up by an id in its path (or a tenant's, for operators) */
const addressed = (op: ApiOperation) => op.pathParams.length > 0;

/** An intruder with full rights where they stand: their own data is theirs, the victim's is not there. */
const outsider = (op: ApiOperation, victimRefs: boolean): Expectation =>
  platform(op) ? problem(403, 'PLATFORM_ONLY') : addressed(op) ? problem(404, 'NOT_FOUND') : victimRefs ? { kind: 'refused' } : { kind: 'allowed' };

/** A user of the victim's own company refused by the route's guards: admin routes first, then the permission. */
const guarded = (op: ApiOperation, hasRole: boolean): Expectation =>
  platform(op) ? problem(403, 'PLATFORM_ONLY') : op.admin ? problem(403, hasRole ? 'ADMIN_REQUIRED' : 'ROLE_REQUIRED') : problem(403, 'FORBIDDEN');

export function variants(scene: Scene): Variant[] {
  const unauthenticated = (name: string, token: string | undefined): Variant => ({
    name,
    applies: secured,
    token: () => token,
    expect: () => problem(401, 'UNAUTHENTICATED'),
    mirror: (s) => s.victim,
    needles: (s) => s.needles.tenant,
    compare: true,
  });
  return [
    unauthenticated('no token', undefined),
    ...Object.entries(scene.forged).map(([name, token]) => unauthenticated(`forged token: ${name}`, token)),
    {
      name: "another tenant's administrator (every code)",
      applies: secured,
      token: (s) => s.tokens.xAdmin,
      expect: outsider,
      foreign: () => true,
      mirror: (s) => s.mirrorX,
      needles: (s) => s.needles.tenant,
      compare: true,
    },
    {
      name: 'an administrator of company B naming company A (X-Company-Id)',
      applies: secured,
      token: (s) => s.tokens.bAdmin,
      headers: (s) => ({ 'x-company-id': s.V.companyId }),
      expect: (op) => (platform(op) ? problem(403, 'PLATFORM_ONLY') : problem(403, 'COMPANY_FORBIDDEN')),
      mirror: (s) => s.mirrorB,
      needles: (s) => s.needles.company,
      compare: true,
    },
    {
      // company data only: tenant-wide rows (users, roles, companies) are every company's to see
      name: 'an administrator of company B in their own company',
      applies: (op) => op.company && !platform(op),
      token: (s) => s.tokens.bAdmin,
      expect: outsider,
      foreign: (s, entity) => s.api.model(entity)?.scope === 'company',
      mirror: (s) => s.mirrorB,
      needles: (s) => s.needles.company,
      compare: true,
    },
    // their own row, with references to the victim's rows in the body: as unknown as ids that never existed
    {
      name: "another tenant's administrator, on their own row, naming the victim's rows",
      ownPath: true,
      applies: (op) => op.pathParams.length > 0 && op.body !== undefined && !platform(op),
      token: (s) => s.tokens.xAdmin,
      expect: (_op, victimRefs) => (victimRefs ? { kind: 'refused' } : { kind: 'allowed' }),
      foreign: () => true,
      mirror: (s) => s.mirrorX,
      needles: (s) => s.needles.tenant,
      compare: true,
    },
    {
      name: "an administrator of company B, on their own row, naming company A's rows",
      ownPath: true,
      applies: (op) => op.pathParams.length > 0 && op.body !== undefined && !platform(op),
      token: (s) => s.tokens.bAdmin,
      expect: (_op, victimRefs) => (victimRefs ? { kind: 'refused' } : { kind: 'allowed' }),
      foreign: (s, entity) => s.api.model(entity)?.scope === 'company',
      mirror: (s) => s.mirrorB,
      needles: (s) => s.needles.company,
      compare: true,
    },
    {
      name: "a user of company A missing the route's codes",
      applies: (op) => op.can !== undefined,
      token: (s, op) => s.lacking(op.can!.action, op.can!.subject),
      expect: (op) => guarded(op, true),
      mirror: (s) => s.victim,
      needles: () => [],
      compare: true,
    },
    {
      name: 'a user of company A with no role',
      applies: (op) => op.can !== undefined || op.admin,
      token: (s) => s.tokens.noRole,
      expect: (op) => guarded(op, false),
      mirror: (s) => s.victim,
      needles: () => [],
      compare: true,
    },
    {
      // a user manager may not take over or lock out an administrator (OWASP API5); the victim's user is one
      name: 'every code but no admin role, against an administrator',
      applies: (op) => op.method !== 'GET' && !platform(op) && Object.values(op.addresses).includes('User'),
      token: (s) => s.tokens.allCodes,
      expect: (op) => problem(403, op.admin ? 'ADMIN_REQUIRED' : 'FORBIDDEN'),
      mirror: (s) => s.victim,
      needles: () => [],
      compare: false,
    },
  ];
}
