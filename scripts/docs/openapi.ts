// The OpenAPI document the problems and events pages are made from: the one the
// server publishes at /api-docs/json, from a kernel on an embedded in-memory
// database (PGlite) with every module loaded, no demo data and no workers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { openKernel } from '../../core/kernel.ts';
import { buildApp } from '../../core/app.ts';

export interface Schema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  $ref?: string;
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
}

export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; description?: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description?: string; headers?: Record<string, unknown> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Operation }>;
  components: { schemas: Record<string, Schema> };
  tags?: { name: string; description?: string }[];
}

export async function openApiDocument(): Promise<OpenApiDocument> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-docs-'));
  const secret = 'docs-only-secret-never-used-to-sign-anything';
  const config = loadConfig({ DATA_DIR: dataDir, PGLITE_MEMORY: 'true', DEMO_DATA: 'false', WORKERS: 'false', LOG_LEVEL: 'silent', JWT_SECRET: secret, SECRET_KEY: secret });
  const kernel = await openKernel(config);
  try {
    const app = await buildApp(kernel, { logger: false });
    await app.ready();
    // a copy: plain JSON, as a client downloads it
    const doc = JSON.parse(JSON.stringify(app.swagger())) as OpenApiDocument;
    await app.close();
    return doc;
  } finally {
    await kernel.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
