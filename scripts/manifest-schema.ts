// npm run manifest:schema: writes manifests/manifest.schema.json from the
// TypeBox declaration in core/manifest/format.ts (the only source of truth).
// A test compares the file with manifestJsonSchema(), so the two cannot drift.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ManifestSchema } from '../core/manifest/format.ts';

export const MANIFEST_SCHEMA_FILE = fileURLToPath(new URL('../manifests/manifest.schema.json', import.meta.url));

export const manifestJsonSchema = () => `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...ManifestSchema }, null, 2)}\n`;

if (import.meta.main) {
  writeFileSync(MANIFEST_SCHEMA_FILE, manifestJsonSchema());
  console.log('wrote manifests/manifest.schema.json');
}
