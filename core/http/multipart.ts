// multipart/form-data for the routes that declare it (a handler's `upload`
// schema, see http/module-routes.ts), with the configured limits. Fastify
// parses content types for every route alike, so every other route refuses a
// multipart body itself: the API speaks JSON.
import type { FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import type { Config } from '../config.ts';
import { httpError } from '../errors.ts';
import type { UploadLimits } from '../files/upload.ts';

export async function installMultipart(app: FastifyInstance, config: Config): Promise<void> {
  const limits: UploadLimits = { fileSize: config.files.uploadMaxBytes, fieldSize: 64 * 1024, fields: 20 };
  app.decorate('uploadLimits', limits);
  // one file per request; parts bound what a form may hold besides
  await app.register(multipart, { limits: { ...limits, files: 1, parts: limits.fields + 1, fieldNameSize: 100, headerPairs: 100 } });
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart() && !request.routeOptions.config.multipart) {
      // the body stays unread: the connection cannot carry another request
      throw httpError('UNSUPPORTED_MEDIA_TYPE', 'this route takes application/json, not multipart/form-data', { headers: { connection: 'close' } });
    }
  });
}
