// Row ids are UUIDs (v7 when the kernel makes them): one pattern for every
// place that must tell an id from anything else before PostgreSQL sees it.
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
