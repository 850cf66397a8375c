// Writes a tiny cross-encoder folder for the onnx reranker's tests: a BERT-style sequence
// classifier with one logit, exported as transformers.js reads it (config.json, tokenizer.json,
// tokenizer_config.json, onnx/model.onnx), generated here because nothing may be downloaded. The
// graph gives every token a weight (a Gather of a [vocab, 1] table by input_ids) and sums them over
// the sequence, so a (query, text) pair's logit is the sum of its words' weights: the query's words
// add the same to every text, and texts are ordered by the weights of their own words. It takes
// the three inputs a real BERT cross-encoder takes (the attention mask and token types unused).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  bytesField,
  intField,
  SPECIAL,
  TENSOR_FLOAT,
  TENSOR_INT64,
  tensorValueInfo,
  writeWordLevelTokenizer,
} from './tiny-onnx-model.js';

/** Writes the model under `dir`; `weights` gives each known word its weight (lower-case words). */
export async function writeTinyCrossEncoder(dir: string, weights: Record<string, number>): Promise<string> {
  const vocab = [...SPECIAL, ...Object.keys(weights)];
  const table = vocab.map((word) => weights[word] ?? 0);
  await mkdir(path.join(dir, 'onnx'), { recursive: true });
  await writeFile(path.join(dir, 'onnx', 'model.onnx'), encodeModel(table));
  await writeFile(
    path.join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'bert',
      architectures: ['BertForSequenceClassification'],
      id2label: { 0: 'LABEL_0' },
      label2id: { LABEL_0: 0 },
    }),
  );
  await writeWordLevelTokenizer(dir, vocab);
  return dir;
}

/** The relevance the model gives `text` for `query`: the sigmoid of the summed weights. */
export function tinyCrossEncoderScore(weights: Record<string, number>, query: string, text: string): number {
  const words = `${query} ${text}`.toLowerCase().match(/\w+/g) ?? [];
  const logit = words.reduce((sum, word) => sum + (weights[word] ?? 0), 0);
  return 1 / (1 + Math.exp(-logit));
}

const ATTRIBUTE_INT = 2;

function encodeModel(table: readonly number[]): Buffer {
  const weights = Buffer.concat([
    intField(1, table.length),
    intField(1, 1),
    intField(2, TENSOR_FLOAT),
    bytesField(8, 'weights'),
    bytesField(9, Buffer.from(Float32Array.from(table).buffer)),
  ]);
  const axes = Buffer.concat([
    intField(1, 1),
    intField(2, TENSOR_INT64),
    bytesField(8, 'axes'),
    bytesField(9, Buffer.from(BigInt64Array.from([1n]).buffer)),
  ]);
  const gather = Buffer.concat([
    bytesField(1, 'weights'),
    bytesField(1, 'input_ids'),
    bytesField(2, 'token_scores'),
    bytesField(3, 'weigh'),
    bytesField(4, 'Gather'),
  ]);
  const keepdims = Buffer.concat([bytesField(1, 'keepdims'), intField(3, 0), intField(20, ATTRIBUTE_INT)]);
  const sum = Buffer.concat([
    bytesField(1, 'token_scores'),
    bytesField(1, 'axes'),
    bytesField(2, 'logits'),
    bytesField(3, 'sum'),
    bytesField(4, 'ReduceSum'),
    bytesField(5, keepdims),
  ]);
  const graph = Buffer.concat([
    bytesField(1, gather),
    bytesField(1, sum),
    bytesField(2, 'tiny-cross-encoder'),
    bytesField(5, weights),
    bytesField(5, axes),
    bytesField(11, tensorValueInfo('input_ids', TENSOR_INT64, ['batch', 'sequence'])),
    bytesField(11, tensorValueInfo('attention_mask', TENSOR_INT64, ['batch', 'sequence'])),
    bytesField(11, tensorValueInfo('token_type_ids', TENSOR_INT64, ['batch', 'sequence'])),
    bytesField(12, tensorValueInfo('logits', TENSOR_FLOAT, ['batch', 1])),
  ]);
  const opset = Buffer.concat([bytesField(1, ''), intField(2, 13)]);
  return Buffer.concat([
    intField(1, 8),
    bytesField(2, 'docindex-tests'),
    bytesField(7, graph),
    bytesField(8, opset),
  ]);
}
