// Schemas of the /v1/partitions routes: the list and the 202 of a partition's deletion.
import { Type } from '@sinclair/typebox';

export const PartitionParams = Type.Object(
  { name: Type.String({ maxLength: 64, description: 'The partition’s name.', examples: ['support'] }) },
  { additionalProperties: false },
);

export const PartitionList = Type.Object(
  {
    partitions: Type.Array(
      Type.Object({
        name: Type.String({ description: 'The partition’s name.' }),
        documents: Type.Integer({ description: 'Documents in it (any status).' }),
        chunks: Type.Integer({ description: 'Their chunks (ready versions).' }),
        bytes: Type.Integer({
          description: 'The sizes of their original files and downloads, summed (JSON text counts none).',
        }),
        status: Type.Union([Type.Literal('active'), Type.Literal('deleting')], {
          description:
            '`deleting`: DELETE /v1/partitions/{name} was accepted and its documents are being purged; the counts fall as they go, and the entry disappears once it is empty.',
        }),
      }),
    ),
  },
  {
    description: 'The partitions the API key may see that hold documents or are being deleted, by name.',
    examples: [
      {
        partitions: [
          { name: 'default', documents: 1200, chunks: 18_344, bytes: 94_112_003, status: 'active' },
          { name: 'support', documents: 310, chunks: 2_207, bytes: 0, status: 'deleting' },
        ],
      },
    ],
  },
);

export const PartitionDeleteAck = Type.Object(
  {
    status: Type.Literal('accepted'),
    partition: Type.String({ description: 'The partition being deleted.' }),
  },
  {
    description: 'The partition is marked for deletion; its documents are purged in the background.',
    examples: [{ status: 'accepted', partition: 'support' }],
  },
);
