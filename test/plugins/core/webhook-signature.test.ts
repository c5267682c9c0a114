// Webhook signatures (Standard Webhooks), checked against an independent implementation:
// the convention's own JavaScript library, standardwebhooks (a devDependency for this).
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { generateSecret, SECRET_PATTERN, sign, webhookHeaders } from '../../../plugins/core/webhooks/signature.ts';

const now = () => Math.floor(Date.now() / 1000);
const body = JSON.stringify({ type: 'order.created', timestamp: '2026-01-02T03:04:05Z', data: { id: 42, name: 'Zoë ✓ "quoted"' } });

t.test("the convention's published test vector", async (t) => {
  // from the Standard Webhooks reference libraries' tests (standard-webhooks repository,
  // libraries/javascript/src/webhook.test.ts, "sign function works"); the npm package ships no tests
  const signature = sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
  t.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
});

t.test('the reference library verifies what webhookHeaders produces', async (t) => {
  const secret = generateSecret();
  const headers = webhookHeaders(secret, 'msg_2Lk8', now(), body);
  t.same(Object.keys(headers).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp']);
  t.equal(headers['webhook-id'], 'msg_2Lk8');
  t.match(headers['webhook-timestamp'], /^\d+$/);
  t.same(new Webhook(secret).verify(body, headers), JSON.parse(body));
  t.equal(new Webhook(secret).sign('msg_2Lk8', new Date(Number(headers['webhook-timestamp']) * 1000), body), headers['webhook-signature'], 'the same signature as the library makes');
  t.doesNotThrow(() => new Webhook(secret).verify('', webhookHeaders(secret, 'msg_empty', now(), '')), 'an empty body');
});

t.test('the reference library refuses a changed delivery', async (t) => {
  const secret = generateSecret();
  const headers = webhookHeaders(secret, 'msg_2Lk8', now(), body);
  const verify =
    (payload: string, h: Record<string, string>, key = secret) =>
    () =>
      new Webhook(key).verify(payload, h);
  t.throws(verify(body.replace('42', '43'), headers), 'a changed body');
  t.throws(verify(`${body} `, headers), 'a byte appended to the body');
  t.throws(verify(body, { ...headers, 'webhook-id': 'msg_2Lk9' }), 'a changed id');
  t.throws(verify(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) }), 'a changed timestamp');
  t.throws(verify(body, headers, generateSecret()), 'a wrong secret');
  const old = now() - 10 * 60;
  t.throws(verify(body, webhookHeaders(secret, 'msg_old', old, body)), 'a timestamp ten minutes old');
  t.throws(verify(body, webhookHeaders(secret, 'msg_new', now() + 10 * 60, body)), 'a timestamp ten minutes ahead');
});

t.test('generateSecret and SECRET_PATTERN', async (t) => {
  const pattern = new RegExp(SECRET_PATTERN);
  const secrets = new Set(Array.from({ length: 50 }, generateSecret));
  t.equal(secrets.size, 50, 'random');
  for (const secret of secrets) {
    t.match(secret, pattern);
    t.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 24, '24 key bytes');
  }
  for (const ok of [
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    `whsec_${Buffer.alloc(25, 7).toString('base64')}`,
    `whsec_${Buffer.alloc(26, 7).toString('base64')}`,
  ]) {
    t.match(ok, pattern, ok);
  }
  const short = `whsec_${Buffer.alloc(23, 7).toString('base64')}`;
  for (const bad of [
    short,
    'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS',
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-w',
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw=',
    ' whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    'whsec_',
  ]) {
    t.notMatch(bad, pattern, JSON.stringify(bad));
    t.throws(() => sign(bad, 'msg_1', now(), body), `sign refuses ${JSON.stringify(bad)}`);
  }
  t.throws(() => sign(generateSecret(), 'msg_1', 1.5, body), 'a timestamp in whole seconds');
});
