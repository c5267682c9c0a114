// Encryption at rest for fields a manifest marks `secret: true` (mail server
// passwords, API secrets): AES-256-GCM with a random 96-bit nonce per value, so
// equal secrets never look alike and a changed ciphertext fails to decrypt.
// Stored as "v1.<nonce>.<tag>.<ciphertext>" (base64url); the version names the
// format so a later key rotation can tell old values from new ones.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const FORMAT = 'v1';

export class SecretBox {
  #key: Buffer;

  /** Any secret of at least 32 characters; hashed to the 256-bit key. */
  constructor(secret: string) {
    if (secret.length < 32) throw new Error('the secret key must be at least 32 characters');
    this.#key = createHash('sha256').update(`plinth:secret-fields:${secret}`).digest();
  }

  encrypt(plain: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [FORMAT, nonce, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** The plain text; throws when the value was not sealed with this key. */
  decrypt(sealed: string): string {
    const [format, nonce, tag, data] = sealed.split('.');
    if (format !== FORMAT || data === undefined) throw new Error('not a sealed secret');
    // the full 16-byte tag only: without authTagLength GCM accepts a tag cut to
    // 4 bytes and checks only those, forgeable in ~2^32 tries
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(nonce, 'base64url'), { authTagLength: 16 });
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }

  // never in a log line or a JSON dump of the kernel
  toJSON(): string {
    return '[SecretBox]';
  }
}
