// Webhook signatures after the Standard Webhooks convention, so receivers can verify
// our deliveries with any of its libraries: a secret is 'whsec_' + base64 of the key
// bytes; the signature is 'v1,' + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)),
// sent in the webhook-signature header beside webhook-id and webhook-timestamp.
import { createHmac, randomBytes } from 'node:crypto';

/** A secret: 'whsec_' + padded base64 of at least 24 key bytes (32 characters of whole groups, or more). */
export const SECRET_PATTERN = '^whsec_(?:[A-Za-z0-9+/]{4}){8,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$';
const SECRET = new RegExp(SECRET_PATTERN);

/** A new secret from 24 random bytes, the size the convention's own examples use. */
export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** 'v1,<base64 HMAC-SHA256>' of `${id}.${timestampSeconds}.${body}` under the secret's key. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  // a garbled secret would still give a signature, one no receiver can verify: fail loudly instead
  if (!SECRET.test(secret)) throw new Error('A webhook secret is whsec_ followed by the base64 of at least 24 bytes');
  if (!Number.isSafeInteger(timestampSeconds)) throw new Error('A webhook timestamp is whole seconds since the epoch');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers a delivery carries. */
export function webhookHeaders(secret: string, id: string, timestampSeconds: number, body: string): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': sign(secret, id, timestampSeconds, body) };
}
