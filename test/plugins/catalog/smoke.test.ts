import t from 'tap';
import { build } from '../../helper.ts';

t.test('create, read and list a product', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();
  const created = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'A-1', name: 'Hammer', price: '12.50' } });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.headers.location, /^\/api\/products\/[0-9a-f-]{36}$/);
  t.equal(created.headers.etag, '"1"');
  const read = await ctx.as(tenant.adminToken, { method: 'GET', url: created.headers.location as string });
  t.equal(read.json().price, '12.50');
  const list = await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/products?search=amm' });
  t.equal(list.json().total, 1);
});
