// API-key clients as their users manage them: create (the key is in that
// answer only), list and read with exact presence, rename, rotate the key
// (the old one works for a grace period) and revoke. Users see their own
// clients (erp:ai:view); erp:ai:admin sees every client of the tenant. The
// key's hash, lookup id and the token key are internal fields: no answer
// ever holds them.
import { etag, handler, httpError, Type, validationError, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { newApiKey, newTokenKey } from './client-keys.ts';
import { CLIENT_CODE } from './client-auth.ts';
import { withPresence } from './presence.ts';
import { queueJob, settleJobsOfRevoked } from './jobs.ts';

const DEFAULT_GRACE_SECONDS = 3600;
const MAX_GRACE_SECONDS = 7 * 24 * 3600;

const Id = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
const Client = Type.Ref('AiClient');
/** a client with its new API key: the only answers that hold one */
const WithKey = (description: string, headers: string[] = []) =>
  Type.Intersect([Client, Type.Object({ apiKey: Type.String({ description: 'the API key (plk_, the tenant, a lookup id and the secret, joined by _): shown in this answer only, keep it safe' }) })], {
    description,
    headers,
  });
const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};
const Page = (item: ReturnType<typeof Type.Ref>, description: string) => Type.Object({ items: Type.Array(item), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() }, { description });

const dto = (ctx: ModuleContext, row: Row) => withPresence(ctx.data('AiClient').toDto(row), ctx.now());

export const listClients = handler(
  {
    querystring: Type.Object(
      {
        ...Paging,
        sort: Type.Optional(Type.String({ pattern: '^-?(name|createdAt|updatedAt|lastSeenAt|expiresAt)$' })),
        search: Type.Optional(Type.String({ maxLength: 200 })),
        status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('revoked')])),
        ownerId: Type.Optional(Type.String({ format: 'uuid' })),
      },
      { additionalProperties: false },
    ),
    response: { 200: Page(Client, 'Clients, with presence as of now') },
  },
  async (ctx, request) => {
    const page = await ctx.data('AiClient').list({ ...request.query });
    const now = ctx.now();
    return { ...page, items: page.items.map((c) => withPresence(c, now)) };
  },
);

export const getClient = handler({ params: Id, response: { 200: Type.Ref('AiClient', { description: 'The client, with presence as of now', headers: ['ETag'] }) } }, async (ctx, request, reply) => {
  const row = await ctx.data('AiClient').read(request.params.id);
  reply.header('etag', etag(row.version));
  return dto(ctx, row);
});

export const updateClient = handler(
  {
    params: Id,
    body: Type.Object(
      { name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })), description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])) },
      { additionalProperties: false, minProperties: 1 },
    ),
    response: { 200: Type.Ref('AiClient', { description: 'The client', headers: ['ETag'] }) },
    problems: ['PRECONDITION_FAILED'],
  },
  async (ctx, request, reply) => {
    const ifMatch = request.headers['if-match'];
    const row = await ctx.data('AiClient').update(request.params.id, request.body, { ifMatch: typeof ifMatch === 'string' ? ifMatch : undefined });
    reply.header('etag', etag(row.version));
    return dto(ctx, row);
  },
);

/** The scopes a new client gets: known codes the creator holds, always with erp:ai:client. */
async function scopesFor(ctx: ModuleContext, asked: string[] | undefined): Promise<string[]> {
  const scopes = [...new Set([CLIENT_CODE, ...(asked ?? [])])];
  const unknown = scopes.map((c, i) => ({ c, i })).filter(({ c }) => !ctx.isKnownCode(c));
  if (unknown.length) throw validationError(unknown.map(({ c }) => ({ path: '/scopes', message: `${c} is no permission code` })));
  const held = new Set(await ctx.codesOf(ctx.principal.roles));
  const beyond = scopes.filter((c) => c !== CLIENT_CODE && !held.has(c));
  if (beyond.length) throw httpError('FORBIDDEN', `a client gets only codes its creator holds: not ${beyond.join(', ')}`);
  return scopes.sort();
}

export const createClient = handler(
  {
    body: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 120 }),
        description: Type.Optional(Type.String({ maxLength: 2000 })),
        scopes: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
            maxItems: 50,
            description: 'permission codes beyond erp:ai:client (always given); only codes the creator holds',
            examples: [['erp:ai:client']],
          }),
        ),
        expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'the key (and its rotations) is refused that many days from now; default never' })),
      },
      { additionalProperties: false },
    ),
    response: { 201: WithKey('The client and its API key (this once); Location names the client', ['Location']) },
  },
  async (ctx, request, reply) => {
    const { name, description, scopes, expiresInDays } = request.body;
    const now = ctx.now();
    const expires = expiresInDays === undefined ? null : new Date(now.getTime() + expiresInDays * 86_400_000);
    const key = newApiKey(ctx.tenantId);
    const row = await ctx.data('AiClient').create(
      { name, ...(description === undefined ? {} : { description }) },
      {
        internal: {
          ownerId: ctx.userId,
          companyId: ctx.companyId,
          scopes: await scopesFor(ctx, scopes),
          keyLookup: key.lookup,
          keyHash: key.hash,
          keyLastFour: key.lastFour,
          keyCreatedAt: now,
          expiresAt: expires,
          tokenKey: newTokenKey(),
        },
      },
    );
    reply.code(201).header('location', `/api/ai/clients/${row.id}`);
    return { ...dto(ctx, row), apiKey: key.key };
  },
);

export const rotateClientKey = handler(
  {
    params: Id,
    querystring: Type.Object(
      {
        graceSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_GRACE_SECONDS, description: `how long the old key keeps working (default ${DEFAULT_GRACE_SECONDS}); 0: not at all` })),
      },
      { additionalProperties: false },
    ),
    response: { 200: WithKey('The client and its new API key (this once)') },
    problems: ['CONFLICT'],
  },
  async (ctx, request) => {
    const grace = request.query.graceSeconds ?? DEFAULT_GRACE_SECONDS;
    const now = ctx.now();
    const key = newApiKey(ctx.tenantId);
    const row = await ctx.transaction(async (tx) => {
      const clients = tx.data('AiClient');
      const old = await clients.lock(request.params.id);
      if (old.status !== 'active') throw httpError('CONFLICT', 'a revoked client gets no new key');
      const keys = (await clients.reveal(old.id, ['keyLookup', 'keyHash', 'tokenKey']))!;
      // one previous key at a time: rotating again within the grace ends the older one
      const set: Row = { keyLookup: key.lookup, keyHash: key.hash, keyLastFour: key.lastFour, keyCreatedAt: now };
      // a client made without a key (demo data) gets its token key with its first one
      if (!keys.tokenKey) set.tokenKey = newTokenKey();
      Object.assign(
        set,
        grace > 0
          ? { previousKeyLookup: keys.keyLookup, previousKeyHash: keys.keyHash, previousKeyLastFour: old.keyLastFour, previousKeyExpiresAt: new Date(now.getTime() + grace * 1000) }
          : { previousKeyLookup: null, previousKeyHash: null, previousKeyLastFour: null, previousKeyExpiresAt: null },
      );
      return clients.update(old.id, {}, { set });
    });
    return { ...dto(ctx, row), apiKey: key.key };
  },
);

export const revokeClient = handler(
  { params: Id, response: { 200: Type.Ref('AiClient', { description: 'The client, revoked: its keys and tokens are refused from now on', headers: ['ETag'] }) } },
  async (ctx, request, reply) => {
    const now = ctx.now();
    const row = await ctx.transaction(async (tx) => {
      const old = await tx.data('AiClient').lock(request.params.id);
      if (old.status === 'revoked') return old;
      const set = { status: 'revoked', revokedAt: now, presence: 'offline', previousKeyLookup: null, previousKeyHash: null, previousKeyExpiresAt: null };
      const revoked = await tx.data('AiClient').update(old.id, {}, { set });
      await settleJobsOfRevoked(tx, old.id, now);
      return revoked;
    });
    reply.header('etag', etag(row.version));
    return dto(ctx, row);
  },
);

export const queueClientJob = handler(
  {
    params: Id,
    body: Type.Object(
      {
        kind: Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z][a-z0-9._-]*$', description: 'what to do; the client knows the kinds it runs' }),
        payload: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'the job input (an object), up to 64 KiB of JSON' })),
        maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'tries before it is dead (default 5)' })),
      },
      { additionalProperties: false },
    ),
    response: { 201: Type.Ref('AiJob', { description: 'The job, queued; Location names it', headers: ['Location'] }) },
    problems: ['CONFLICT', 'PAYLOAD_TOO_LARGE'],
  },
  async (ctx, request, reply) => {
    const row = await queueJob(ctx, { clientId: request.params.id, ...request.body });
    reply.code(201).header('location', `/api/ai/jobs/${row.id}`);
    return ctx.data('AiJob').toDto(row);
  },
);

const JobQuery = Type.Object(
  {
    ...Paging,
    sort: Type.Optional(Type.String({ pattern: '^-?(createdAt|updatedAt|availableAt|finishedAt)$' })),
    state: Type.Optional(Type.Union(['queued', 'leased', 'done', 'failed', 'dead'].map((s) => Type.Literal(s)))),
    kind: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export { JobQuery, Page, Id };

export const listClientJobs = handler({ params: Id, querystring: JobQuery, response: { 200: Page(Type.Ref('AiJob'), "A client's jobs, newest first") } }, async (ctx, request) => {
  // 404 for a client the caller cannot see
  await ctx.data('AiClient').read(request.params.id);
  return ctx.data('AiJob').list({ ...request.query }, { clientId: request.params.id });
});
