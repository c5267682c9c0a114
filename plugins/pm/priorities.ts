// GET /api/pm/priorities: the task priorities in rank order, as a list page.
import { handler, Type } from '../../core/plugin-api.ts';

const PRIORITIES = [
  { id: 'low', name: 'Low', rank: 1 },
  { id: 'normal', name: 'Normal', rank: 2 },
  { id: 'high', name: 'High', rank: 3 },
  { id: 'critical', name: 'Critical', rank: 4 },
];

const Priority = Type.Object(
  {
    id: Type.String({ description: 'the value of Task.priority' }),
    name: Type.String(),
    rank: Type.Integer({ minimum: 1, description: 'higher is more urgent; sort=priority follows it' }),
  },
  { additionalProperties: false },
);

export const listPriorities = handler(
  {
    response: {
      200: Type.Object(
        { items: Type.Array(Priority), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() },
        { additionalProperties: false, description: 'Every task priority, lowest first' },
      ),
    },
  },
  async () => ({ items: PRIORITIES, page: 1, size: PRIORITIES.length, total: PRIORITIES.length }),
);
