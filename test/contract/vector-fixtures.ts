// What the VectorSearch and VectorStageStore contract suites share: vectors that point where a
// test wants them, and ready documents with a vector per chunk written as the vector stage writes.
import { expect } from 'vitest';
import type { ChunkVector, DocumentStore, VectorStageStore } from '../../src/domain/ports.js';
import type { NewDocument } from '../../src/domain/types.js';
import { indexedInto } from './document-fixtures.js';

/** A unit vector pointing mostly along `axis`, a little along `tilt`. */
export function unit(
  dimensions: number,
  axis: number,
  tilt = (axis + 1) % dimensions,
  amount = 0.1,
): Float32Array {
  const v = new Float32Array(dimensions);
  v[axis] = 1;
  v[tilt] = (v[tilt] ?? 0) + amount;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** A ready document whose chunk i gets a vector of `dimensions` along axis axes[i]. */
export async function embedded(
  h: { store: DocumentStore; stage: VectorStageStore },
  orgId: string,
  profile: number,
  dimensions: number,
  axes: number[],
  over: Partial<NewDocument> = {},
) {
  const doc = await indexedInto(
    h.store,
    orgId,
    axes.map((a, i) => `chunk ${i} about axis ${a}`),
    over,
  );
  const vectors: ChunkVector[] = axes.map((axis, chunkIndex) => ({
    documentId: doc.id,
    chunkIndex,
    vector: unit(dimensions, axis),
  }));
  expect(await h.stage.writeVectors(orgId, profile, vectors)).toBe(true);
  return doc;
}
