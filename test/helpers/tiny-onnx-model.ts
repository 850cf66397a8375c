// Writes a tiny sentence-transformer folder for the onnx embedder's tests: nothing may be
// downloaded, so the tests generate the model. The graph is one Gather of a fixed embedding table
// by the token ids (its output is `last_hidden_state`), so transformers.js's mean pooling makes a
// text's vector the mean of its words' rows: deterministic, and texts sharing words are near. The
// ONNX protobuf is encoded by hand (the handful of fields a graph needs), the tokenizer is a
// word-level tokenizer.json with [CLS]/[SEP] added as a BERT tokenizer does.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Words the tokenizer knows; anything else is [UNK]. */
export const TINY_MODEL_WORDS = [
  'the',
  'a',
  'cat',
  'dog',
  'sat',
  'on',
  'mat',
  'bird',
  'sings',
  'car',
  'engine',
  'road',
  'river',
  'water',
  'blue',
  'red',
  'green',
  'apple',
  'banana',
  'fruit',
  'invoice',
  'payment',
  'contract',
  'report',
] as const;

/** The special tokens, ids 0 to 3 of every tiny model's vocabulary. */
export const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'] as const;

export interface TinyModel {
  dir: string;
  dimensions: number;
}

/** Writes config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx under `dir`. */
export async function writeTinyOnnxModel(dir: string, dimensions = 8): Promise<TinyModel> {
  const vocab = [...SPECIAL, ...TINY_MODEL_WORDS];
  await mkdir(path.join(dir, 'onnx'), { recursive: true });
  await writeFile(path.join(dir, 'onnx', 'model.onnx'), encodeGatherModel(vocab.length, dimensions));
  await writeFile(
    path.join(dir, 'config.json'),
    JSON.stringify({ model_type: 'bert', architectures: ['BertModel'], hidden_size: dimensions }),
  );
  await writeWordLevelTokenizer(dir, vocab);
  return { dir, dimensions };
}

/**
 * Writes a BERT-style word-level tokenizer (tokenizer_config.json and tokenizer.json) of `vocab`,
 * whose first four words are SPECIAL: lower-cased, split on white space, [CLS] … [SEP] around a
 * text and [SEP] between the two texts of a pair.
 */
export async function writeWordLevelTokenizer(dir: string, vocab: readonly string[]): Promise<void> {
  await writeFile(
    path.join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      model_max_length: 512,
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      do_lower_case: true,
    }),
  );
  await writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
}

function tokenizerJson(vocab: readonly string[]): unknown {
  const ids = Object.fromEntries(vocab.map((word, id) => [word, id]));
  const special = (token: string) => ({ id: token, ids: [ids[token]], tokens: [token] });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: { '[CLS]': special('[CLS]'), '[SEP]': special('[SEP]') },
    },
    decoder: null,
    model: { type: 'WordLevel', vocab: ids, unk_token: '[UNK]' },
  };
}

// --- ONNX protobuf, encoded by hand -------------------------------------------------------------

export const TENSOR_FLOAT = 1;
export const TENSOR_INT64 = 7;

export function varint(value: number): number[] {
  const out: number[] = [];
  let v = value;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** A varint field (wire type 0). */
export function intField(field: number, value: number): Buffer {
  return Buffer.from([...varint(field << 3), ...varint(value)]);
}

/** A length-delimited field (wire type 2): bytes, strings and nested messages. */
export function bytesField(field: number, value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([Buffer.from([...varint((field << 3) | 2), ...varint(bytes.length)]), bytes]);
}

/** ValueInfoProto of a tensor whose dims are symbolic names or fixed sizes. */
export function tensorValueInfo(name: string, elemType: number, dims: Array<string | number>): Buffer {
  const shape = Buffer.concat(
    dims.map((d) => bytesField(1, typeof d === 'string' ? bytesField(2, d) : intField(1, d))),
  );
  const tensorType = Buffer.concat([intField(1, elemType), bytesField(2, shape)]);
  return Buffer.concat([bytesField(1, name), bytesField(2, bytesField(1, tensorType))]);
}

/** The embedding table: row r, column c is a fixed pseudo-random value in [-1, 1). */
function embeddingTable(rows: number, dimensions: number): Buffer {
  const values = new Float32Array(rows * dimensions);
  let seed = 0x9e3779b9;
  for (let i = 0; i < values.length; i++) {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    values[i] = (seed / 2 ** 32) * 2 - 1;
  }
  return Buffer.from(values.buffer);
}

function encodeGatherModel(vocabSize: number, dimensions: number): Buffer {
  const table = Buffer.concat([
    intField(1, vocabSize),
    intField(1, dimensions),
    intField(2, TENSOR_FLOAT),
    bytesField(8, 'embeddings'),
    bytesField(9, embeddingTable(vocabSize, dimensions)),
  ]);
  const gather = Buffer.concat([
    bytesField(1, 'embeddings'),
    bytesField(1, 'input_ids'),
    bytesField(2, 'last_hidden_state'),
    bytesField(3, 'lookup'),
    bytesField(4, 'Gather'),
  ]);
  const graph = Buffer.concat([
    bytesField(1, gather),
    bytesField(2, 'tiny-sentence-encoder'),
    bytesField(5, table),
    bytesField(11, tensorValueInfo('input_ids', TENSOR_INT64, ['batch', 'sequence'])),
    bytesField(12, tensorValueInfo('last_hidden_state', TENSOR_FLOAT, ['batch', 'sequence', dimensions])),
  ]);
  const opset = Buffer.concat([bytesField(1, ''), intField(2, 13)]);
  return Buffer.concat([
    intField(1, 8), // ir_version
    bytesField(2, 'docindex-tests'), // producer_name
    bytesField(7, graph),
    bytesField(8, opset),
  ]);
}
