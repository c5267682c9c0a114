// The kernel's file store (core/files/file-store.ts): whole files or none, one
// folder per tenant, keys that are generated ids and never paths.
import t from 'tap';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { DiskFileStore, tenantFiles } from '../../../core/files/file-store.ts';
import { uniqueId } from '../../helper.ts';

const root = join(tmpdir(), uniqueId('plinth-store'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const store = new DiskFileStore(root);
const filesUnder = (dir: string) => {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  } catch {
    return [];
  }
};

t.test('put, get, exists, delete', async (t) => {
  const bytes = randomBytes(300_000);
  const key = randomUUID();
  const stored = await store.put('acme', key, Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]));
  t.same(stored, { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  t.equal(await store.exists('acme', key), true);
  const content = (await store.get('acme', key))!;
  t.equal(content.size, bytes.length);
  const chunks: Buffer[] = [];
  for await (const c of content.stream) chunks.push(c as Buffer);
  t.ok(Buffer.concat(chunks).equals(bytes), 'the same bytes back');
  t.equal(await store.get('other', key), null, "another tenant's folder has no such file");
  t.equal(await store.delete('acme', key), true);
  t.equal(await store.delete('acme', key), false, 'twice: nothing left to delete');
  t.equal(await store.exists('acme', key), false);
  t.equal(await store.get('acme', key), null);
});

t.test('a source that fails part-way leaves no file, not even a partial one', async (t) => {
  const key = randomUUID();
  async function* failing() {
    yield Buffer.from('first part');
    throw Object.assign(new Error('refused'), { code: 'REFUSED' });
  }
  await t.rejects(store.put('acme', key, failing()), { code: 'REFUSED' });
  t.equal(await store.exists('acme', key), false);
  t.same(filesUnder(join(root, 'acme')), [], 'nothing under the tenant folder');
});

t.test('keys are generated ids and tenants are tenant ids: never a path', async (t) => {
  const body = () => Readable.from([Buffer.from('x')]);
  await t.rejects(store.put('acme', '../../../etc/passwd', body()), /no file key/);
  await t.rejects(store.put('../../acme', randomUUID(), body()), /no tenant id/);
  await t.rejects(store.get('acme', 'a/b'), /no file key/);
  t.same(
    filesUnder(root).filter((e) => !e.parentPath.startsWith(join(root, 'acme'))),
    [],
    'nothing outside the tenant folders',
  );
});

t.test('a tenant view makes the keys', async (t) => {
  const files = tenantFiles(store, 'beta');
  const a = await files.put(Readable.from([Buffer.from('hello')]));
  const b = await files.put(Readable.from([Buffer.from('hello')]));
  t.not(a.key, b.key, 'each put its own key');
  t.match(a, { size: 5, sha256: createHash('sha256').update('hello').digest('hex') });
  t.equal(await text((await files.get(a.key))!.stream), 'hello');
  t.ok(await files.exists(b.key));
  t.equal(await tenantFiles(store, 'acme').exists(a.key), false, 'not in another tenant');
  t.ok(await files.delete(a.key));
  t.equal(filesUnder(join(root, 'beta')).length, 1);
});
