// Access tokens an attacker can make without the signing key, and the two a
// test makes with it (expired; signed with another key): none may verify.
import { createSigner } from 'fast-jwt';
import { testConfig } from '../../helper.ts';

type Claims = Record<string, unknown>;
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const claimsOf = (token: string): Claims => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
/** Only what the kernel puts in a token; the signer adds iat, exp and iss again. */
const own = ({ sub, tid, rol, cid, pc }: Claims) => ({ sub, tid, rol, cid, pc });

/** One character of the signature changed; a middle one, since the last carries padding bits. */
function flipSignature(token: string): string {
  const [h, p, s] = token.split('.');
  const i = Math.floor(s.length / 2);
  return `${h}.${p}.${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
}

/**
 * victim: a real token of the victim tenant's administrator; intruder: a real
 * token of another tenant's user; insider: a real token of a low-privilege
 * user of the victim tenant.
 */
export function forgedTokens(victim: string, intruder: string, insider: string): Record<string, string> {
  const v = claimsOf(victim);
  const [h, , s] = victim.split('.');
  const [ih, , is] = intruder.split('.');
  const [uh, up, us] = insider.split('.');
  const secret = testConfig().jwtSecret;
  const signer = (key: string, clockTimestamp = Date.now()) => createSigner({ key, algorithm: 'HS256', iss: 'plinth', expiresIn: 60_000, clockTimestamp });
  return {
    'alg none, no signature': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(v)}.`,
    'alg none, signature kept': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(v)}.${s}`,
    'one signature byte flipped': flipSignature(victim),
    'expired (signed with the real key)': signer(secret, Date.now() - 3_600_000)(own(v)),
    'signed with another key': signer('another-secret-another-secret-0123456789')(own(v)),
    "another tenant's token naming this tenant": `${ih}.${b64({ ...claimsOf(intruder), ...own(v) })}.${is}`,
    "a user's token naming the administrator": `${uh}.${b64({ ...claimsOf(insider), sub: v.sub, rol: v.rol })}.${us}`,
    'header swapped to HS512': `${b64({ alg: 'HS512', typ: 'JWT' })}.${up}.${us}`,
    'payload of the victim, header and signature of the intruder': `${ih}.${victim.split('.')[1]}.${is}`,
    'unsigned payload, valid header': `${h}.${b64(v)}.${Buffer.from('x').toString('base64url')}`,
  };
}
