// npm run manifest:schema: writes manifests/manifest.schema.json from the
// TypeBox declaration in core/manifest/schema.ts (the only source of truth).
import { writeFileSync } from 'node:fs';
import { ManifestSchema } from '../core/manifest/schema.ts';

export const manifestJsonSchema = () => `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...ManifestSchema }, null, 2)}\n`;

if (process.argv[1]?.endsWith('manifest-schema.ts')) {
  writeFileSync('manifests/manifest.schema.json', manifestJsonSchema());
  console.log('wrote manifests/manifest.schema.json');
}
