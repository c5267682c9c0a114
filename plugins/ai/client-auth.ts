// How an API-key client authenticates. `ai-api-key` takes the key in
// X-API-Key (only POST /api/ai/client/token accepts it) and `ai-client` the
// short-lived client token it is exchanged for (Authorization: Bearer
// plct_…), accepted on /api/ai/client/* only; the kernel refuses user tokens
// there and these credentials everywhere else. Both read the client's row on
// every call: a revoked or expired client is refused at once, whatever token
// it holds, and the call counts as activity for its presence.
import { handler, httpError, Type, type Authenticator, type ModuleContext, type Principal, type Row } from '../../core/plugin-api.ts';
import { parseApiKey, hashSecret, sameHash, readToken, validSignature, signToken } from './client-keys.ts';
import { touch } from './presence.ts';

const TOKEN_TTL_SECONDS = 900;
export const CLIENT_CODE = 'erp:ai:client';

const refused = (why: string) => httpError('UNAUTHENTICATED', why);

/** The principal a client acts as: its scopes are its permission codes, in the company it was created in. */
function principalOf(client: Row): Principal {
  return { kind: 'client', id: client.id, roles: [], codes: client.scopes as string[], companyIds: client.companyId ? [client.companyId] : [] };
}

function assertUsable(client: Row, now: Date): void {
  if (client.status !== 'active') throw refused('the client was revoked');
  if (client.expiresAt && new Date(client.expiresAt).getTime() <= now.getTime()) throw refused('the API key expired');
}

/** The client whose key this is, checked: current key, or the previous one within its grace period. */
async function clientOfKey(sys: ModuleContext, lookup: string, secret: string, now: Date): Promise<Row> {
  const clients = sys.data('AiClient');
  const [found] = await clients.find({ $or: [{ keyLookup: lookup }, { previousKeyLookup: lookup }] }, { limit: 1 });
  const keys = found && (await clients.reveal(found.id, ['keyLookup', 'keyHash', 'previousKeyLookup', 'previousKeyHash']));
  if (!keys) throw refused('unknown API key');
  const current = keys.keyLookup === lookup;
  if (!sameHash(current ? keys.keyHash : keys.previousKeyHash, hashSecret(secret))) throw refused('unknown API key');
  if (!current && !(keys.previousKeyExpiresAt && new Date(keys.previousKeyExpiresAt).getTime() > now.getTime())) throw refused('the API key was replaced by a newer one');
  assertUsable(keys, now);
  return keys;
}

export const apiKeyAuthenticator: Authenticator = {
  scheme: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'an AI client API key (plk_…), exchanged for a client token' },
  async authenticate(request, system) {
    const header = request.headers['x-api-key'];
    if (header === undefined) return null;
    const parsed = typeof header === 'string' ? parseApiKey(header) : null;
    if (!parsed) throw refused('X-API-Key is no AI client key (plk_…)');
    const sys = await system(parsed.tenantId);
    const now = sys.now();
    const client = await clientOfKey(sys, parsed.lookup, parsed.secret, now);
    await touch(sys, client, now);
    return { tenantId: parsed.tenantId, principal: principalOf(client), companyId: client.companyId ?? null };
  },
};

export const clientTokenAuthenticator: Authenticator = {
  scheme: { type: 'http', scheme: 'bearer', bearerFormat: 'plct', description: 'a client token from POST /api/ai/client/token' },
  async authenticate(request, system) {
    const header = request.headers.authorization;
    if (header === undefined) return null;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? readToken(header.slice(7).trim()) : null;
    if (!token) throw refused('send a client token (Authorization: Bearer plct_…); user tokens are refused here');
    const sys = await system(token.claims.t);
    const now = sys.now();
    const client = /^[0-9a-f-]{36}$/.test(token.claims.c) ? await sys.data('AiClient').reveal(token.claims.c, ['tokenKey']) : null;
    if (!client || !validSignature(client.tokenKey, token.body, token.signature)) throw refused('invalid client token');
    if (token.claims.exp * 1000 <= now.getTime()) throw refused('the client token expired: get a new one with the API key');
    assertUsable(client, now);
    await touch(sys, client, now);
    return { tenantId: token.claims.t, principal: principalOf(client), companyId: client.companyId ?? null };
  },
};

const ClientToken = Type.Object(
  {
    token: Type.String({ description: 'sent as "Authorization: Bearer" and the token to /api/ai/client/*' }),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer({ description: 'seconds' }),
    expiresAt: Type.String({ format: 'date-time' }),
    clientId: Type.String({ format: 'uuid' }),
  },
  { additionalProperties: false },
);

export const issueClientToken = handler({ response: { 200: ClientToken } }, async (ctx) => {
  const now = ctx.now();
  const client = await ctx.data('AiClient').reveal(ctx.principal.id!, ['tokenKey']);
  if (!client) throw refused('unknown client');
  // never beyond the key's own expiry
  const keyEnds = client.expiresAt ? new Date(client.expiresAt).getTime() : Infinity;
  const exp = Math.floor(Math.min(now.getTime() + TOKEN_TTL_SECONDS * 1000, keyEnds) / 1000);
  const token = signToken(client.tokenKey, { t: ctx.tenantId, c: client.id, exp });
  return { token, tokenType: 'Bearer' as const, expiresIn: Math.max(0, exp - Math.floor(now.getTime() / 1000)), expiresAt: new Date(exp * 1000).toISOString(), clientId: client.id };
});
