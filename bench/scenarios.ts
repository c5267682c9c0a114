// The scenarios (issue 6; issue 10 raised the write targets to 0.65 and added
// default-list): what each request looks like under load, the
// one probe request whose SQL is captured from Plinth and whose response both
// servers must answer identically, and the target ratio to the baseline.
// default-list (issue 10) is measured against the idiomatic baseline instead:
// SQL written by hand, not Plinth's replayed (see baseline-server.ts).
import { SEARCH_TERMS, WRITE_SKU_PREFIX, type BenchTenant } from './fixtures.ts';
import type { AcRequest } from './load.ts';

export interface Probe {
  method: 'GET' | 'POST' | 'PATCH';
  url: string;
  body?: Record<string, unknown>;
}

export interface Scenario {
  name: string;
  label: string;
  /** the floor for Plinth / baseline requests per second */
  target: number;
  write: boolean;
  /** the request captured and compared; tag keeps SKUs unique per server */
  probe(t: BenchTenant, tag: string): Probe;
  /** per-request setup for autocannon; tag keeps SKUs unique per run and server */
  load(t: BenchTenant, tag: string): (req: AcRequest) => AcRequest;
  /** response parts that legitimately differ between two writes (masked before comparing) */
  volatile?: RegExp[];
  /**
   * replay (default): the baseline sends Plinth's captured statements, and both answers must be byte-identical.
   * idiomatic: the baseline sends what an engineer would write by hand for the same page, so it sees slow SQL;
   * the answers must agree in status, headers, envelope (page, size, total) and item shape, not in which rows.
   */
  baseline?: 'replay' | 'idiomatic';
}

const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)];
export const headersOf = (t: BenchTenant): Record<string, string> => ({ authorization: `Bearer ${t.token}`, 'x-company-id': t.companyId });

/** GET by id of a random product: of one tenant (single), or of a random one of many (spread): the tenancy scale's pair. */
export function spreadSetups(one: BenchTenant, many: BenchTenant[]): Record<'single' | 'spread', (req: AcRequest) => AcRequest> {
  const byId = (req: AcRequest, t: BenchTenant) => {
    req.path = `/api/products/${t.productIds[Math.floor(Math.random() * t.productIds.length)]}`;
    req.headers = headersOf(t);
    return req;
  };
  return { single: (req) => byId(req, one), spread: (req) => byId(req, many[Math.floor(Math.random() * many.length)]) };
}
const json = (req: AcRequest, t: BenchTenant, method: string, path: string, body: unknown): AcRequest => {
  req.method = method;
  req.path = path;
  req.headers = { ...headersOf(t), 'content-type': 'application/json' };
  req.body = JSON.stringify(body);
  return req;
};

/** Capture values: distinctive, so they are found again in the SQL text. */
export const CAPTURE = { stock: 4173, patchStock: 5281, version: 987654, price: '19.90', name: 'Bench widget' };

const SCENARIOS: Scenario[] = [
  {
    name: 'by-id',
    label: 'GET /api/products/:id',
    target: 0.65,
    write: false,
    probe: (t) => ({ method: 'GET', url: `/api/products/${t.productIds[0]}` }),
    load: (t) => (req) => {
      req.path = `/api/products/${pick(t.productIds)}`;
      req.headers = headersOf(t);
      return req;
    },
  },
  {
    name: 'list',
    label: 'GET /api/products?size=50',
    target: 0.7,
    write: false,
    probe: () => ({ method: 'GET', url: '/api/products?size=50' }),
    load: (t) => (req) => {
      req.path = '/api/products?size=50';
      req.headers = headersOf(t);
      return req;
    },
  },
  {
    // the list page as first shown: no sort, no filter; Plinth's default sort against an index-backed hand-written page
    name: 'default-list',
    label: 'GET /api/products?size=50 vs idiomatic',
    target: 0.5,
    write: false,
    baseline: 'idiomatic',
    probe: () => ({ method: 'GET', url: '/api/products?size=50' }),
    load: (t) => (req) => {
      req.path = '/api/products?size=50';
      req.headers = headersOf(t);
      return req;
    },
  },
  {
    name: 'search',
    label: 'GET /api/products?search=…',
    target: 0.7,
    write: false,
    probe: () => ({ method: 'GET', url: `/api/products?search=${SEARCH_TERMS[0]}` }),
    load: (t) => {
      let i = 0;
      return (req) => {
        req.path = `/api/products?search=${SEARCH_TERMS[i++ % SEARCH_TERMS.length]}`;
        req.headers = headersOf(t);
        return req;
      };
    },
  },
  {
    name: 'create',
    label: 'POST /api/products',
    target: 0.65,
    write: true,
    probe: (t, tag) => ({
      method: 'POST',
      url: '/api/products',
      body: { sku: `${WRITE_SKU_PREFIX}${tag}-probe`, name: CAPTURE.name, price: CAPTURE.price, stock: CAPTURE.stock, categoryId: t.categoryIds[0] },
    }),
    load: (t, tag) => {
      let n = 0;
      return (req) => json(req, t, 'POST', '/api/products', { sku: `${WRITE_SKU_PREFIX}${tag}-${++n}`, name: CAPTURE.name, price: CAPTURE.price, stock: n % 1000, categoryId: pick(t.categoryIds) });
    },
    volatile: [/"(id|sku|createdAt|updatedAt)":"[^"]*"/g],
  },
  {
    name: 'update',
    label: 'PATCH /api/products/:id',
    target: 0.65,
    write: true,
    probe: (t) => ({ method: 'PATCH', url: `/api/products/${t.patchProbeId}`, body: { stock: CAPTURE.patchStock } }),
    load: (t) => {
      let n = Math.floor(Math.random() * 100_000); // a value equal to the stored one would make Plinth skip the UPDATE
      return (req) => json(req, t, 'PATCH', `/api/products/${pick(t.productIds)}`, { stock: 1000 + (++n % 100_000) });
    },
    volatile: [/"updatedAt":"[^"]*"/g, /"version":\d+/g],
  },
];

export function selectScenarios(list: string | undefined): Scenario[] {
  if (!list) return SCENARIOS;
  if (list === 'none') return [];
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  return SCENARIOS.filter((s) => names.includes(s.name));
}
