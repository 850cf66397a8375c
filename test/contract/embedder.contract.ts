// Conformance suite for Embedder: the openai adapter (against a real OpenAI-protocol server on
// 127.0.0.1) and the onnx adapter (a tiny model the tests generate) run these same tests. What a
// caller relies on: one unit-length vector per text, in order, of one length; the same text always
// gives the same vector whatever batch it came in; texts that share words are nearer than texts
// that share none; a closed embedder says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Embedder, EmbeddingError } from '../../src/domain/ports.js';

export interface EmbedderHarness {
  /** batchSize: texts per provider call the embedder must use. */
  make(opts: { batchSize: number }): Promise<Embedder>;
  close(): Promise<void>;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

export function embedderContract(name: string, setup: () => Promise<EmbedderHarness>): void {
  describe(`Embedder contract: ${name}`, () => {
    let harness: EmbedderHarness;
    let embedder: Embedder;

    beforeAll(async () => {
      harness = await setup();
      embedder = await harness.make({ batchSize: 4 });
    });
    afterAll(async () => {
      await embedder?.close();
      await harness?.close();
    });

    it('answers one unit-length vector per text, in order, all of the learned length', async () => {
      const texts = ['the cat sat on the mat', 'a red car on the road', 'blue river water'];
      const vectors = await embedder.embed(texts);
      expect(vectors).toHaveLength(3);
      const length = vectors[0]!.length;
      expect(length).toBeGreaterThan(1);
      expect(embedder.dimensions()).toBe(length);
      for (const v of vectors) {
        expect(v).toBeInstanceOf(Float32Array);
        expect(v.length).toBe(length);
        expect(dot(v, v)).toBeCloseTo(1, 4);
      }
      // In order: each vector is the one that text gets alone.
      for (const [i, text] of texts.entries()) {
        const [alone] = await embedder.embed([text]);
        expect(dot(alone!, vectors[i]!)).toBeCloseTo(1, 4);
      }
    });

    it('gives a text the same vector whatever batch it travels in (more texts than one batch)', async () => {
      const words = [
        'cat',
        'dog',
        'bird',
        'car',
        'river',
        'apple',
        'banana',
        'invoice',
        'report',
        'contract',
        'engine',
      ];
      const texts = words.map((w, i) => `${w} ${words[(i + 3) % words.length]} sings`);
      const together = await embedder.embed(texts);
      expect(together).toHaveLength(texts.length);
      const reversed = await embedder.embed([...texts].reverse());
      for (const [i, v] of together.entries()) {
        expect(dot(v, reversed[texts.length - 1 - i]!)).toBeCloseTo(1, 4);
      }
    });

    it('puts texts that share words nearer than texts that share none', async () => {
      const [a, b, c] = await embedder.embed([
        'the cat sat on the mat',
        'the cat sat',
        'invoice payment contract',
      ]);
      expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!));
    });

    it('answers an empty list with no vectors', async () => {
      expect(await embedder.embed([])).toEqual([]);
    });

    it('refuses work once closed, with the code `closed`', async () => {
      const own = await harness.make({ batchSize: 2 });
      await own.embed(['cat']);
      await own.close();
      const error = await own.embed(['cat']).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EmbeddingError);
      expect((error as EmbeddingError).code).toBe('closed');
    });
  });
}
