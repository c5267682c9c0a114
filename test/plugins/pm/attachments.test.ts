// Attachments: POST /api/pm/tasks/:taskId/attachments (multipart, into the
// kernel's file store), GET /api/pm/attachments/:id/content, and the file going
// with its row. Who may upload, download and delete is the manifest's grants;
// what a file is comes from its bytes. Whatever fails leaves no row and no file.
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, uniqueId } from '../../helper.ts';
import { apiAs } from '../core/core-api.ts';
import { until } from '../../support/wait.ts';
import { contentDisposition } from '../../../plugins/pm/attachments.ts';
import { expectProblem, expectStatus, form, png, storedFiles, team, upload, UNKNOWN_ID } from './attachment-api.ts';

// above the JSON body limit (1 MiB), which an upload does not count against
const LIMIT = 1536 * 1024;
const root = join(tmpdir(), uniqueId('plinth-files'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const ctx = await build(t, { config: { files: { dir: root, uploadMaxBytes: LIMIT } } });
const tenant = await ctx.tenant();
const admin = apiAs(ctx, tenant.adminToken);
const crew = await team(ctx, tenant, 'ATT');
const { taskId } = crew;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const files = () => storedFiles(root, tenant.id);
const count = async () => expectStatus(await admin('GET', `/api/pm/attachments?taskId=${taskId}&size=1000`), 200, 'list').total as number;

t.test('upload and download: the bytes, their hash and safe headers', async (t) => {
  const comment = expectStatus(await admin('POST', '/api/pm/comments', { taskId, body: 'see the picture' }), 201, 'comment');
  // larger than the bytes read to decide the type, so it arrives in several pieces
  const bytes = png(150 * 1024);
  const res = await upload(ctx, crew.member.token, taskId, [
    { name: 'commentId', value: comment.id },
    { name: 'file', fileName: 'screen shot.png', type: 'application/octet-stream', data: bytes },
  ]);
  const row = expectStatus(res, 201, 'upload');
  t.equal(res.headers.location, `/api/pm/attachments/${row.id}`);
  t.match(row, { taskId, commentId: comment.id, fileName: 'screen shot.png', contentType: 'image/png', size: bytes.length, sha256: sha256(bytes), uploaderId: crew.member.id });
  t.notOk('storageKey' in row, 'the store key stays internal');
  t.notOk('storageKey' in expectStatus(await admin('GET', `/api/pm/attachments/${row.id}`), 200, 'read'));
  t.same(files().filter((f) => !f.startsWith('.partial')).length, 1, 'one file stored');

  // a viewer of the project may download it
  const down = await ctx.as(crew.viewer.token, { method: 'GET', url: `/api/pm/attachments/${row.id}/content` });
  t.equal(down.statusCode, 200);
  t.ok(down.rawPayload.equals(bytes), 'the same bytes');
  t.equal(down.headers['content-type'], 'image/png');
  t.equal(down.headers['content-length'], String(bytes.length));
  t.equal(down.headers['content-disposition'], `attachment; filename="screen shot.png"; filename*=UTF-8''screen%20shot.png`);
  t.equal(down.headers['x-content-type-options'], 'nosniff');
  t.equal(down.headers.etag, `"${sha256(bytes)}"`);

  // text: declared text/*, UTF-8 without NUL; a name that tries to leave its folder and to break the header
  const text = Buffer.from('name;amount\nÄpfel;3\n');
  const csv = expectStatus(await upload(ctx, crew.member.token, taskId, [{ name: 'file', fileName: '../../etc/"Be\u0007richt\u202e" ü.csv', type: 'text/csv', data: text }]), 201, 'csv');
  t.equal(csv.contentType, 'text/csv');
  t.equal(csv.fileName, '"Bericht" ü.csv', 'no path, no control or bidi character');
  const got = await ctx.as(crew.member.token, { method: 'GET', url: `/api/pm/attachments/${csv.id}/content` });
  t.equal(got.body, text.toString());
  t.equal(got.headers['content-type'], 'text/csv; charset=utf-8');
  const disposition = String(got.headers['content-disposition']);
  t.equal(disposition, `attachment; filename="Bericht _.csv"; filename*=UTF-8''Bericht%20%C3%BC.csv`, 'no quote in the header; the UTF-8 name percent-encoded');
  // a name with a line break never arrives (the multipart parser drops such a part): 400, no file
  const broken = form([{ name: 'file', fileName: 'a\r\nX-Evil: 1.txt', type: 'text/plain', data: text }]);
  expectProblem(t, await upload(ctx, crew.member.token, taskId, broken), 400, 'VALIDATION_FAILED', 'a line break in the name');
  // and were one stored, the header would not carry it
  t.equal(contentDisposition('a"b\r\nSet-Cookie: x=1.txt'), `attachment; filename="abSet-Cookie: x=1.txt"; filename*=UTF-8''abSet-Cookie%3A%20x%3D1.txt`);
  t.equal(contentDisposition('C:\\Users\\ann\\x.txt'), `attachment; filename="x.txt"; filename*=UTF-8''x.txt`, 'a Windows path too');
  t.equal(contentDisposition("it's (1)*.txt"), `attachment; filename="it's (1)*.txt"; filename*=UTF-8''it%27s%20%281%29%2A.txt`);
  t.equal(await count(), 2);
});

t.test('what is no accepted file is refused, and nothing is kept', async (t) => {
  const before = await count();
  const elf = Buffer.concat([Buffer.from('7f454c46020101000000000000000000', 'hex'), randomBytes(4000)]);
  const exe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(58), Buffer.from([0x80, 0, 0, 0]), Buffer.alloc(64), Buffer.from('PE\0\0'), randomBytes(2000)]);
  const cases: [string, { fileName: string; type: string; data: Buffer }][] = [
    ['ELF bytes named .png', { fileName: 'cat.png', type: 'image/png', data: elf }],
    ['a Windows program', { fileName: 'report.pdf', type: 'application/pdf', data: exe }],
    ['text not declared as text', { fileName: 'notes.txt', type: 'application/octet-stream', data: Buffer.from('hello') }],
    ['HTML', { fileName: 'page.html', type: 'text/html', data: Buffer.from('<script>alert(1)</script>') }],
    ['text with NUL', { fileName: 'a.txt', type: 'text/plain', data: Buffer.from('a\0b') }],
    ['text that is not UTF-8', { fileName: 'a.txt', type: 'text/plain', data: Buffer.from([0x61, 0xc3, 0x28, 0x62]) }],
  ];
  for (const [what, file] of cases) expectProblem(t, await upload(ctx, crew.member.token, taskId, [{ name: 'file', ...file }]), 415, 'UNSUPPORTED_MEDIA_TYPE', what);
  t.equal(await count(), before, 'no row');
  t.equal(files().length, before, 'no file, not even a partial one');
});

t.test('too large: 413, no row and no file', async (t) => {
  const before = await count();
  expectProblem(t, await upload(ctx, crew.member.token, taskId, [{ name: 'file', fileName: 'big.png', type: 'image/png', data: png(LIMIT + 1) }]), 413, 'PAYLOAD_TOO_LARGE', 'one byte over');
  // a body announcing far more than the limit is refused before it is read
  expectProblem(t, await upload(ctx, crew.member.token, taskId, [{ name: 'file', fileName: 'huge.png', type: 'image/png', data: png(4 * 1024 * 1024) }]), 413, 'PAYLOAD_TOO_LARGE', 'announced');
  expectStatus(await upload(ctx, crew.member.token, taskId, [{ name: 'file', fileName: 'exact.png', type: 'image/png', data: png(LIMIT) }]), 201, 'at the limit');
  t.equal(await count(), before + 1);
  t.equal(files().length, before + 1);
});

t.test('bad forms', async (t) => {
  const before = await count();
  const file = { name: 'file', fileName: 'a.png', type: 'image/png', data: png(100) };
  const missing = await upload(ctx, crew.member.token, taskId, [{ name: 'commentId', value: UNKNOWN_ID }]);
  expectProblem(t, missing, 400, 'VALIDATION_FAILED', 'no file');
  t.same(missing.json().errors, [{ path: '/file', message: 'is required' }]);
  expectProblem(t, await upload(ctx, crew.member.token, taskId, [{ ...file, name: 'upload' }]), 400, 'VALIDATION_FAILED', 'file in another field');
  expectProblem(t, await upload(ctx, crew.member.token, taskId, [file, { name: 'bogus', value: '1' }]), 400, 'VALIDATION_FAILED', 'unknown field');
  expectProblem(t, await upload(ctx, crew.member.token, taskId, [file, { name: 'commentId', value: 'x' }]), 400, 'VALIDATION_FAILED', 'bad comment id');
  expectProblem(t, await upload(ctx, crew.member.token, taskId, [file, { name: 'commentId', value: UNKNOWN_ID }]), 400, 'VALIDATION_FAILED', 'unknown comment');
  const other = expectStatus(await admin('POST', '/api/pm/tasks', { projectId: crew.projectId, title: 'other' }), 201, 'other task');
  const foreign = expectStatus(await admin('POST', '/api/pm/comments', { taskId: other.id, body: 'elsewhere' }), 201, 'comment');
  expectProblem(t, await upload(ctx, crew.member.token, taskId, [file, { name: 'commentId', value: foreign.id }]), 400, 'VALIDATION_FAILED', "another task's comment");
  expectProblem(t, await upload(ctx, crew.member.token, taskId, [file, { ...file, fileName: 'b.png' }]), 413, 'PAYLOAD_TOO_LARGE', 'two files');
  expectProblem(t, await ctx.as(crew.member.token, { method: 'POST', url: `/api/pm/tasks/${taskId}/attachments`, payload: { file: 'x' } }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'JSON');
  expectProblem(t, await upload(ctx, crew.member.token, 'nope', [file]), 400, 'VALIDATION_FAILED', 'bad task id');
  expectProblem(t, await upload(ctx, crew.member.token, UNKNOWN_ID, [file]), 404, 'NOT_FOUND', 'unknown task');
  // a generated JSON route takes no multipart body
  const asForm = form([{ name: 'title', value: 'x' }]);
  expectProblem(
    t,
    await ctx.as(crew.member.token, { method: 'POST', url: '/api/pm/tasks', payload: asForm.payload, headers: { 'content-type': asForm.contentType } }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    'multipart elsewhere',
  );
  t.equal(await count(), before, 'no row');
  t.equal(files().length, before, 'no file');
});

t.test('who may: viewers download, outsiders see nothing, other tenants neither', async (t) => {
  const file = () => [{ name: 'file', fileName: 'a.png', type: 'image/png', data: png(500) }];
  const row = expectStatus(await upload(ctx, crew.member.token, taskId, file()), 201, 'member uploads');
  const before = files().length;
  expectProblem(t, await upload(ctx, crew.viewer.token, taskId, file()), 403, 'FORBIDDEN', 'a viewer may not upload');
  expectProblem(t, await upload(ctx, crew.outsider.token, taskId, file()), 404, 'NOT_FOUND', 'a non-member sees no task');
  t.equal(files().length, before, 'the refused uploads left no file');
  const content = `/api/pm/attachments/${row.id}/content`;
  t.equal((await ctx.as(crew.viewer.token, { method: 'GET', url: content })).statusCode, 200, 'a viewer may download');
  expectProblem(t, await ctx.as(crew.outsider.token, { method: 'GET', url: content }), 404, 'NOT_FOUND', 'a non-member may not');
  expectProblem(t, await ctx.as(crew.outsider.token, { method: 'DELETE', url: `/api/pm/attachments/${row.id}` }), 404, 'NOT_FOUND', 'nor delete');
  expectProblem(t, await ctx.as(crew.member.token, { method: 'GET', url: `/api/pm/attachments/${UNKNOWN_ID}/content` }), 404, 'NOT_FOUND', 'unknown attachment');

  const other = await ctx.tenant();
  expectProblem(t, await upload(ctx, other.adminToken, taskId, file()), 404, 'NOT_FOUND', "another tenant's task");
  expectProblem(t, await ctx.as(other.adminToken, { method: 'GET', url: content }), 404, 'NOT_FOUND', "another tenant's attachment");
  t.same(storedFiles(root, other.id), [], 'nothing stored for the other tenant');
});

t.test('deleting an attachment, or its task, removes the file', async (t) => {
  const file = [{ name: 'file', fileName: 'a.png', type: 'image/png', data: png(500) }];
  const row = expectStatus(await upload(ctx, crew.member.token, taskId, file), 201, 'upload');
  const before = files().length;
  expectProblem(t, await ctx.as(crew.viewer.token, { method: 'DELETE', url: `/api/pm/attachments/${row.id}` }), 403, 'FORBIDDEN', 'a viewer may not delete');
  t.equal(files().length, before);
  t.equal((await ctx.as(crew.member.token, { method: 'DELETE', url: `/api/pm/attachments/${row.id}` })).statusCode, 204, 'the uploader may');
  t.equal(files().length, before - 1, 'the file is gone');
  expectProblem(t, await ctx.as(crew.member.token, { method: 'GET', url: `/api/pm/attachments/${row.id}/content` }), 404, 'NOT_FOUND');

  const doomed = expectStatus(await admin('POST', '/api/pm/tasks', { projectId: crew.projectId, title: 'doomed' }), 201, 'task');
  for (let i = 0; i < 2; i++) expectStatus(await upload(ctx, crew.member.token, doomed.id, file), 201, 'upload');
  t.equal(files().length, before + 1);
  t.equal((await admin('DELETE', `/api/pm/tasks/${doomed.id}`)).statusCode, 204, 'the task goes');
  t.equal(files().length, before - 1, 'its files with it');
});

t.test('an upload cut off leaves no row and no file', async (t) => {
  const rows = await count();
  const before = files().length;
  const whole = form([{ name: 'file', fileName: 'cut.png', type: 'image/png', data: png(100 * 1024) }]);
  // the body ends in the middle of the file: the closing boundary never comes
  const cut = { payload: whole.payload.subarray(0, 60 * 1024), contentType: whole.contentType };
  expectProblem(t, await upload(ctx, crew.member.token, taskId, cut), 400, 'VALIDATION_FAILED', 'truncated body');
  t.equal(files().length, before);

  // a real client that goes away mid-upload, once the server has begun to store its file
  const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const socket = connect(Number(new URL(address).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /api/pm/tasks/${taskId}/attachments HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${crew.member.token}\r\n` +
      `Content-Type: ${whole.contentType}\r\nContent-Length: ${whole.payload.length}\r\n\r\n`,
  );
  socket.write(whole.payload.subarray(0, 60 * 1024));
  const partial = (f: string[]) => f.some((p) => p.startsWith('.partial'));
  t.ok(partial(await until(files, partial)), 'the server is storing the file');
  socket.destroy();
  const left = await until(files, (f) => !partial(f));
  t.same(left.length, before, 'no file, not even a partial one');
  t.equal(await count(), rows, 'no row');
});
