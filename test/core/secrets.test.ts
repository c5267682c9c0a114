// SecretBox: encryption at rest for `secret: true` fields (AES-256-GCM).
import t from 'tap';
import { SecretBox } from '../../core/secrets.ts';

const KEY = 'k'.repeat(32);
const box = new SecretBox(KEY);

/** The sealed value's four dot-separated parts, as bytes (the format tag as text). */
function parts(sealed: string) {
  const [format, nonce, tag, data] = sealed.split('.');
  return { format, nonce: Buffer.from(nonce, 'base64url'), tag: Buffer.from(tag, 'base64url'), data: Buffer.from(data, 'base64url') };
}
const join = (p: ReturnType<typeof parts>) => [p.format, p.nonce.toString('base64url'), p.tag.toString('base64url'), p.data.toString('base64url')].join('.');

t.test('round trip', async (t) => {
  for (const plain of ['smtp-password', '', 'pässwörd ✓ 🔑', 'a.b.c', 'x'.repeat(10_000)]) {
    const sealed = box.encrypt(plain);
    t.not(sealed, plain);
    t.notOk(sealed.includes(plain) && plain.length > 0, 'the plain text does not show');
    t.equal(box.decrypt(sealed), plain, JSON.stringify(plain.slice(0, 20)));
  }
  t.equal(new SecretBox(KEY).decrypt(box.encrypt('same key, new box')), 'same key, new box', 'the key is derived from the secret alone');
  t.match(box.encrypt('x'), /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/, 'versioned, base64url parts');
});

t.test('a different key cannot open it', async (t) => {
  const sealed = box.encrypt('smtp-password');
  t.throws(() => new SecretBox('K'.repeat(32)).decrypt(sealed));
  t.throws(() => new SecretBox(`${KEY}x`).decrypt(sealed));
});

t.test('a changed value is refused', async (t) => {
  const sealed = box.encrypt('smtp-password');
  for (const key of ['nonce', 'tag', 'data'] as const) {
    const p = parts(sealed);
    p[key][0] ^= 1;
    t.throws(() => box.decrypt(join(p)), `one bit of the ${key} flipped`);
  }
  const longer = parts(sealed);
  longer.data = Buffer.concat([longer.data, Buffer.from([0])]);
  t.throws(() => box.decrypt(join(longer)), 'a byte appended');
  const shorter = parts(sealed);
  shorter.data = shorter.data.subarray(1);
  t.throws(() => box.decrypt(join(shorter)), 'a byte removed');
  const swapped = parts(sealed);
  swapped.data = parts(box.encrypt('smtp-passworx')).data;
  t.throws(() => box.decrypt(join(swapped)), "another value's ciphertext under this nonce and tag");
  for (const bad of ['', 'smtp-password', 'v1', 'v1.a.b', `v2${sealed.slice(2)}`, sealed.split('.').slice(0, 3).join('.')]) {
    t.throws(() => box.decrypt(bad), JSON.stringify(bad.slice(0, 30)));
  }
});

// GCM would take a tag cut to 4..15 bytes and check only that many: a 4-byte
// tag can be forged in about 2^32 tries instead of 2^128
t.test('a shortened authentication tag is refused', async (t) => {
  for (const length of [4, 8, 12, 15]) {
    const p = parts(box.encrypt('smtp-password'));
    p.tag = p.tag.subarray(0, length);
    t.throws(() => box.decrypt(join(p)), `a ${length}-byte tag`);
  }
});

t.test('each encryption differs', async (t) => {
  const sealed = Array.from({ length: 50 }, () => box.encrypt('same'));
  t.equal(new Set(sealed).size, 50, 'equal secrets never look alike');
  t.equal(new Set(sealed.map((s) => parts(s).nonce.toString('hex'))).size, 50, 'a fresh nonce each time');
  t.ok(
    sealed.every((s) => parts(s).nonce.length === 12),
    '96-bit nonces',
  );
  for (const s of sealed) t.equal(box.decrypt(s), 'same');
});

t.test('the key and the box stay out of sight', async (t) => {
  t.throws(() => new SecretBox('k'.repeat(31)), 'a secret under 32 characters is refused');
  t.equal(JSON.stringify({ box }), '{"box":"[SecretBox]"}');
  t.notOk(Object.keys(box).length, 'no enumerable key material');
});
