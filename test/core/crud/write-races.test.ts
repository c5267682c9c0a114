// Concurrent writes to one row: If-Match has exactly one winner, a delete and
// an update of the same version cannot both succeed, and sums over child rows
// written at once add up. Each race runs several rounds on fresh rows.
import t from 'tap';
import { build, onPglite } from '../../helper.ts';
import { crmApi } from '../../plugins/crm/crm-api.ts';

// PGlite runs one statement at a time: its races cannot interleave, two rounds there check the outcome
const ROUNDS = onPglite ? 2 : 5;
const ctx = await build(t);
const tenant = await ctx.tenant();
const api = (method: string, url: string, payload?: object, headers: Record<string, string> = {}) => ctx.as(tenant.adminToken, { method: method as 'GET', url, payload, headers });
const newProduct = async (sku: string) => {
  const res = await api('POST', '/api/products', { sku, name: sku, price: '1.00' });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().id as string;
};
const statuses = (answers: { statusCode: number }[]) => answers.map((r) => r.statusCode).sort();

t.test('eight PATCHes with one If-Match: one 200, seven 412, the winner stored', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    const id = await newProduct(`IFM-${round}`);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, n) => api('PATCH', `/api/products/${id}`, { stock: n + 1 }, { 'if-match': '"1"' })));
    t.same(statuses(answers), [200, 412, 412, 412, 412, 412, 412, 412], `round ${round}`);
    t.ok(answers.filter((r) => r.statusCode === 412).every((r) => r.json().code === 'PRECONDITION_FAILED'));
    const winner = answers.find((r) => r.statusCode === 200)!.json();
    const stored = (await api('GET', `/api/products/${id}`)).json();
    t.match(stored, { version: 2, stock: winner.stock }, "exactly the winner's write is stored");
  }
});

t.test('PUT and PATCH racing on one version: one wins', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    const id = await newProduct(`PUT-${round}`);
    const full = {
      sku: `PUT-${round}`,
      name: 'Replaced',
      description: null,
      price: '2.00',
      currency: 'EUR',
      unit: 'piece',
      stock: 9,
      categoryId: null,
      isActive: true,
      availableFrom: null,
      discontinuedAt: null,
      attributes: null,
    };
    const answers = await Promise.all([api('PUT', `/api/products/${id}`, full, { 'if-match': '"1"' }), api('PATCH', `/api/products/${id}`, { stock: 3 }, { 'if-match': '"1"' })]);
    t.same(statuses(answers), [200, 412], `round ${round}`);
    t.equal((await api('GET', `/api/products/${id}`)).json().version, 2);
  }
});

t.test('DELETE and PATCH racing on one version: never both', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    const id = await newProduct(`DEL-${round}`);
    const [del, patch] = await Promise.all([api('DELETE', `/api/products/${id}`, undefined, { 'if-match': '"1"' }), api('PATCH', `/api/products/${id}`, { stock: 5 }, { 'if-match': '"1"' })]);
    const read = await api('GET', `/api/products/${id}`);
    if (del.statusCode === 204) {
      t.ok([404, 412].includes(patch.statusCode), `round ${round}: the delete won, the patch answers ${patch.statusCode}`);
      t.equal(read.statusCode, 404);
    } else {
      t.equal(del.statusCode, 412, `round ${round}: the patch won, the delete is stale`);
      t.equal(patch.statusCode, 200);
      t.match(read.json(), { version: 2, stock: 5 });
    }
  }
});

t.test("quote lines written at once: the quote's totals are the sums of its lines", async (t) => {
  const { quote, customer } = crmApi(ctx, tenant.adminToken);
  const cust = await customer();
  for (let round = 0; round < ROUNDS; round++) {
    const q = await quote({ customerId: cust.id });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, n) => api('POST', `/api/crm/quotes/${q.id}/lines`, { description: `L${n}`, quantity: '1', unitPrice: `${n + 1}.10`, taxRate: '0.10' })),
    );
    t.same(statuses(answers), [201, 201, 201, 201, 201, 201], `round ${round}`);
    const read = (await api('GET', `/api/crm/quotes/${q.id}`)).json();
    // 1.10 + 2.10 + ... + 6.10 = 21.60; tax 0.11 + 0.21 + ... + 0.61 = 2.16
    t.match(read, { subtotal: '21.60', taxTotal: '2.16', total: '23.76', version: 7 }, 'every line counted once');
  }
});
