// The load generator: autocannon's programmatic API, in the bench process (the
// servers run in their own). Each request is built by the scenario's
// setupRequest, so ids, tenants and SKUs vary per request.
import { createRequire } from 'node:module';

export interface AcRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}
interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
  total?: number;
}
interface AcResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AcResult>;

// autocannon ships no types; this is the part of its API the bench uses
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface LoadOptions {
  url: string;
  connections: number;
  duration: number;
  setup: (req: AcRequest) => AcRequest;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const r = await autocannon({
    url: o.url,
    connections: o.connections,
    duration: o.duration,
    pipelining: 1,
    requests: [{ setupRequest: (req: AcRequest) => o.setup(req) }],
  });
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, Number(s.count)]));
  return {
    rps: Math.round(r.requests.total / r.duration),
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
  };
}
