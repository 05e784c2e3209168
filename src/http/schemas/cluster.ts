// Schemas of the cluster routes.
export interface MoveSessionBody {
  node: string;
}

export const moveSessionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['node'],
  properties: { node: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'the id of the node to run the session' } },
} as const;
