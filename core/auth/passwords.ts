// scrypt (memory-hard, in node:crypto) password hashes: scrypt$N$r$p$salt$hash.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt's cost N for new hashes: 16384 unless PASSWORD_SCRYPT_COST says
 * otherwise (a power of two, 1024–1048576). Read here, not from the config,
 * because hashes are made outside a kernel too (plugin-api). The test script
 * lowers it: a suite creating thousands of users spends its CPU elsewhere.
 * A stored hash names its own parameters, so a change never locks anyone out.
 */
export function scryptCost(value: string | undefined): number {
  if (value === undefined || value === '') return 16384;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1024 || n > 1048576 || (n & (n - 1)) !== 0) throw new Error(`PASSWORD_SCRYPT_COST must be a power of two from 1024 to 1048576, not ${value}`);
  return n;
}

const PARAMS = { N: scryptCost(process.env.PASSWORD_SCRYPT_COST), r: 8, p: 1 };
const KEY_LENGTH = 64;

function derive(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { ...opts, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

// Verifying against this when the user is unknown keeps the timing the same.
const DUMMY = `scrypt$${PARAMS.N}$8$1$AAAAAAAAAAAAAAAAAAAAAA$` + 'A'.repeat(86);

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = (stored ?? DUMMY).split('$');
  if (kind !== 'scrypt' || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return stored !== undefined && stored !== null && key.length === expected.length && timingSafeEqual(key, expected);
}
