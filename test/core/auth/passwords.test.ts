// Password hashes: scrypt with its parameters in the hash, so a hash made at
// another cost (PASSWORD_SCRYPT_COST, lowered by the test script) still verifies.
import t from 'tap';
import { randomBytes, scryptSync } from 'node:crypto';
import { hashPassword, scryptCost, verifyPassword } from '../../../core/auth/passwords.ts';

t.test('a hash verifies its password only', async (t) => {
  const stored = await hashPassword('correct horse');
  t.match(stored, /^scrypt\$\d+\$8\$1\$[\w-]{22}\$[\w-]{86}$/);
  t.ok(await verifyPassword('correct horse', stored));
  t.notOk(await verifyPassword('Correct horse', stored));
  t.notOk(await verifyPassword('correct horse', null), 'an unknown user never verifies');
});

t.test('a hash made at the default cost verifies whatever the cost of new ones', async (t) => {
  const salt = randomBytes(16);
  const key = scryptSync('old password'.normalize('NFKC'), salt, 64, { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  const stored = `scrypt$16384$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
  t.ok(await verifyPassword('old password', stored));
  t.notOk(await verifyPassword('other', stored));
});

t.test('the cost is a power of two in range', async (t) => {
  t.equal(scryptCost(undefined), 16384);
  t.equal(scryptCost('1024'), 1024);
  for (const bad of ['1000', '512', '2097152', 'fast', '-1024']) t.throws(() => scryptCost(bad), /PASSWORD_SCRYPT_COST/, bad);
});
