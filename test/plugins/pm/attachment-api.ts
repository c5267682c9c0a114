// Helpers of the attachment tests (not a test file: tap runs *.test.ts only):
// a project with members of each role and a task, made through the API, and
// multipart bodies built by hand (so a test can cut one short).
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import type { TestContext, TestTenant } from '../../helper.ts';
import { apiAs, expectStatus } from '../core/core-api.ts';

export { expectProblem, expectStatus, UNKNOWN_ID } from '../core/core-api.ts';

export type Part = { name: string; value: string } | { name: string; fileName: string; type: string; data: Buffer };

/** A multipart/form-data body and its Content-Type. */
export function form(parts: Part[]): { payload: Buffer; contentType: string } {
  const boundary = `plinth-${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const head =
      'value' in p
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n`
        : // RFC 5987 form: any name, quotes and line breaks included, reaches the server as it is
          `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename*=UTF-8''${encodeURIComponent(p.fileName)}\r\nContent-Type: ${p.type}\r\n\r\n`;
    chunks.push(Buffer.from(head), 'value' in p ? Buffer.from(p.value) : p.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const chunk = (type: string, data: Buffer) => {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), body.length + 4);
  return out;
};

/** A PNG of exactly `size` bytes (at least 57): a 1x1 header, then an image data chunk of noise. */
export function png(size: number): Buffer {
  const ihdr = Buffer.from('0000000100000001080600000000', 'hex').subarray(0, 13);
  const parts = [Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', ihdr)];
  const fixed = 8 + 25 + 12 + 12;
  return Buffer.concat([...parts, chunk('IDAT', randomBytes(Math.max(0, size - fixed))), chunk('IEND', Buffer.alloc(0))]);
}

/** Every stored file of a tenant under the store's root (partial ones included), as relative paths. */
export function storedFiles(root: string, tenantId: string): string[] {
  const dir = join(root, tenantId);
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
  } catch {
    return [];
  }
}

export interface Team {
  projectId: string;
  taskId: string;
  owner: { id: string; token: string };
  member: { id: string; token: string };
  viewer: { id: string; token: string };
  outsider: { id: string; token: string };
}

/** A project (made by the tenant's admin) with an owner, a member and a viewer, an outsider who holds erp:pm:view too, and one task. */
export async function team(ctx: TestContext, tenant: TestTenant, key: string): Promise<Team> {
  const admin = apiAs(ctx, tenant.adminToken);
  const [owner, member, viewer, outsider] = await Promise.all([0, 1, 2, 3].map(() => ctx.user(tenant, { codes: ['erp:pm:view'] })));
  const project = expectStatus(await admin('POST', '/api/pm/projects', { key, name: `Project ${key}` }), 201, 'project');
  for (const [u, role] of [
    [owner, 'owner'],
    [member, 'member'],
    [viewer, 'viewer'],
  ] as const)
    expectStatus(await admin('POST', `/api/pm/projects/${project.id}/members`, { userId: u.id, role }), 201, `${role} member`);
  const task = expectStatus(await admin('POST', '/api/pm/tasks', { projectId: project.id, title: `Task of ${key}` }), 201, 'task');
  return { projectId: project.id, taskId: task.id, owner, member, viewer, outsider };
}

/** POST a multipart body to a task's attachments as `token`. */
export function upload(ctx: TestContext, token: string, taskId: string, parts: Part[] | { payload: Buffer; contentType: string }) {
  const body = Array.isArray(parts) ? form(parts) : parts;
  return ctx.as(token, { method: 'POST', url: `/api/pm/tasks/${taskId}/attachments`, payload: body.payload, headers: { 'content-type': body.contentType } });
}
