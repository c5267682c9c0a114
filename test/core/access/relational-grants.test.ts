// Relational grant conditions against the database: a board and its cards are
// reached through membership ($exists over BoardMember), compiled into the SQL
// of every list, count, read, write, reference and parent check. A membership
// written now counts on the next request (no cache), and a user in many
// boards is still one statement.
import t from 'tap';
import { build } from '../../helper.ts';
import { manifestsWith } from '../../support/manifests.ts';

const member = (on: Record<string, string>, where: Record<string, unknown> = {}) => ({ $exists: { entity: 'BoardMember', on, where: { userId: '${user.id}', ...where } } });
const manifestsDir = manifestsWith(t, {
  'boards.json': {
    id: 'boards',
    name: 'Boards',
    version: '1.0.0',
    dependsOn: ['core'],
    permissions: [
      { code: 'app:boards:admin', description: 'everything', grants: [{ action: ['read', 'create', 'update', 'delete'], subject: ['Board', 'BoardMember', 'Card'] }] },
      {
        code: 'app:boards:member',
        description: 'boards one is a member of',
        grants: [
          { action: 'read', subject: 'Board', conditions: member({ boardId: 'id' }) },
          { action: 'update', subject: 'Board', conditions: member({ boardId: 'id' }, { role: 'manager' }) },
          { action: ['read', 'create', 'update', 'delete'], subject: 'Card', conditions: member({ boardId: 'boardId' }) },
          // a card marked private is its author's alone, whatever the membership
          { action: ['read', 'create', 'update', 'delete'], subject: 'Card', conditions: { private: true, authorId: { $ne: '${user.id}' } }, inverted: true },
        ],
      },
    ],
    entities: [
      { name: 'Board', scope: 'company', fields: { name: { type: 'string', required: true, maxLength: 80, sort: true } } },
      {
        name: 'BoardMember',
        scope: 'company',
        fields: {
          boardId: { type: 'ref', entity: 'Board', required: true, onDelete: 'cascade', filter: true },
          userId: { type: 'ref', entity: 'User', required: true, onDelete: 'cascade' },
          role: { type: 'enum', values: ['member', 'manager'], default: 'member' },
        },
      },
      {
        name: 'Card',
        scope: 'company',
        fields: {
          boardId: { type: 'ref', entity: 'Board', required: true, onDelete: 'cascade', filter: true },
          title: { type: 'string', required: true, maxLength: 80 },
          authorId: { type: 'ref', entity: 'User' },
          private: { type: 'boolean', default: false },
        },
      },
    ],
    routes: [
      { entity: 'Board', path: '/api/boards' },
      { entity: 'BoardMember', path: '/api/board-members' },
      { entity: 'Card', path: '/api/boards/:boardId/cards' },
    ],
  },
});

const ctx = await build(t, { config: { manifestsDir } });
const tenant = await ctx.tenant();
const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => ctx.as(tenant.adminToken, { method, url, payload });
const created = async (url: string, payload: object) => {
  const res = await admin('POST', url, payload);
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.body}`);
  return res.json().id as string;
};

const user = await ctx.user(tenant, { codes: ['app:boards:member'] });
const as = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => ctx.as(user.token, { method, url, payload });
const mine = await created('/api/boards', { name: 'Mine' });
const managed = await created('/api/boards', { name: 'Managed' });
const theirs = await created('/api/boards', { name: 'Theirs' });
await created('/api/board-members', { boardId: mine, userId: user.id });
await created('/api/board-members', { boardId: managed, userId: user.id, role: 'manager' });
const myCard = await created(`/api/boards/${mine}/cards`, { title: 'on my board' });
const theirCard = await created(`/api/boards/${theirs}/cards`, { title: 'on their board' });
const tenantAdminId = (await admin('GET', `/api/users?search=${encodeURIComponent(tenant.adminEmail)}`)).json().items[0].id as string;
const secret = await created(`/api/boards/${mine}/cards`, { title: "someone else's private card", private: true, authorId: tenantAdminId });

t.test('lists, counts and reads follow membership', async (t) => {
  const boards = (await as('GET', '/api/boards?sort=name')).json();
  t.same(
    boards.items.map((b: { name: string }) => b.name),
    ['Managed', 'Mine'],
  );
  t.equal(boards.total, 2, 'the total counts the same rows');
  t.equal((await as('GET', `/api/boards/${theirs}`)).statusCode, 404, 'another board does not exist for them');
  const cards = (await as('GET', `/api/boards/${mine}/cards`)).json();
  t.same(
    cards.items.map((c: { id: string }) => c.id),
    [myCard],
    "cards of their boards, not another's private card",
  );
  t.equal(cards.total, 1);
  t.equal((await as('GET', `/api/boards/${theirs}/cards/${theirCard}`)).statusCode, 404);
  t.equal((await as('GET', `/api/boards/${mine}/cards/${secret}`)).statusCode, 404, 'an inverted rule narrows the relational one');
});

t.test('writes: row lock, reach after the write, references and parents', async (t) => {
  t.equal((await as('PATCH', `/api/boards/${managed}`, { name: 'Managed!' })).statusCode, 200, 'a manager renames the board');
  const member = await as('PATCH', `/api/boards/${mine}`, { name: 'Mine!' });
  t.equal(member.statusCode, 403, 'a plain member reads but may not update');
  t.equal(member.json().code, 'FORBIDDEN');
  t.equal((await as('PATCH', `/api/boards/${theirs}/cards/${theirCard}`, { title: 'x' })).statusCode, 404, 'a card out of reach is unknown');
  t.equal((await as('DELETE', `/api/boards/${theirs}/cards/${theirCard}`)).statusCode, 404);
  t.equal((await as('GET', `/api/boards/${theirs}/cards`)).statusCode, 404, "a nested path's parent must be readable");
  t.equal((await as('POST', `/api/boards/${theirs}/cards`, { title: 'x' })).statusCode, 404);

  const refused = await as('POST', `/api/boards/${mine}/cards`, { title: 'by the admin', authorId: tenantAdminId });
  t.equal(refused.statusCode, 400, 'a reference must point at a row they can read (they cannot read users)');
  t.same(refused.json().errors, [{ path: '/authorId', message: `no User with id ${tenantAdminId}` }]);

  const card = await as('POST', `/api/boards/${mine}/cards`, { title: 'new' });
  t.equal(card.statusCode, 201, card.body);
  const url = `/api/boards/${mine}/cards/${card.json().id}`;
  const moved = await as('PATCH', url, { private: true });
  t.equal(moved.statusCode, 403, "nor moves a card out of their own reach (a private card with no author is nobody's)");
  t.equal((await as('GET', url)).json().private, false, 'and the refused write left nothing');
  const hidden = await as('POST', `/api/boards/${mine}/cards`, { title: 'hidden', private: true });
  t.equal(hidden.statusCode, 403, 'nor creates a row out of their reach');
  t.equal((await as('GET', `/api/boards/${mine}/cards`)).json().total, 2, 'the refused create left nothing');
  t.equal((await as('DELETE', url)).statusCode, 204);
});

t.test('a membership counts from the next request, and its removal too', async (t) => {
  const link = await created('/api/board-members', { boardId: theirs, userId: user.id });
  t.equal((await as('GET', `/api/boards/${theirs}/cards/${theirCard}`)).statusCode, 200, 'joined: their card is visible');
  t.equal((await admin('DELETE', `/api/board-members/${link}`)).statusCode, 204);
  t.equal((await as('GET', `/api/boards/${theirs}/cards/${theirCard}`)).statusCode, 404, 'left: gone again');
});

t.test('many memberships stay one statement', async (t) => {
  const other = await ctx.user(tenant, { codes: ['app:boards:member'] });
  for (let i = 0; i < 200; i++) {
    const board = await created('/api/boards', { name: `b${i}` });
    await created('/api/board-members', { boardId: board, userId: other.id });
  }
  const res = await ctx.as(other.token, { method: 'GET', url: '/api/boards?size=10' });
  t.equal(res.json().total, 200);
  t.equal(res.json().items.length, 10);
});
