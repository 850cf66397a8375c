// What the webhook durability tests (embedded and scale-out) share: post N documents in batches of
// 50 (each batch with an Idempotency-Key, retried across restarts), then wait until the receiver
// has a document.ready event for every accepted document, and check what the user would: every
// event verified, the same webhook-id on every copy of one event, and (when nothing was killed)
// exactly one copy.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { syntheticDocument } from './texts.js';
import type { ReceivedWebhook, WebhookReceiver } from './webhook-receiver.js';

const BATCH = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates an endpoint over HTTP and registers its secret with the receiver. */
export async function createEndpoint(
  baseUrl: string,
  key: string,
  receiver: WebhookReceiver,
  path: string,
): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url(path), events: ['document.ready'] }),
  });
  expect(res.status).toBe(201);
  const created = (await res.json()) as { id: string; secret: string };
  receiver.expect(path, created.secret);
  return created.id;
}

/**
 * Posts `docs` documents through `api()` (which may change between calls: a restarted server),
 * retrying a batch until it is accepted; resolves with the accepted ids.
 */
export async function postDocuments(
  api: () => Promise<string>,
  key: string,
  docs: number,
  offset = 0,
): Promise<string[]> {
  const accepted: string[] = [];
  for (let first = 0; first < docs; first += BATCH) {
    const body = JSON.stringify({
      documents: Array.from({ length: Math.min(BATCH, docs - first) }, (_, i) => ({
        text: syntheticDocument(offset + first + i),
      })),
      chunk_size: 256,
      chunk_overlap: 16,
    });
    const idempotencyKey = randomUUID();
    for (;;) {
      try {
        const res = await fetch(`${await api()}/v1/ingest`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'idempotency-key': idempotencyKey,
          },
          body,
        });
        if (res.status === 202) {
          accepted.push(...((await res.json()) as { document_ids: string[] }).document_ids);
          break;
        }
      } catch {
        // The server was killed mid-request: the batch goes again (same key, no duplicates).
      }
      await sleep(50);
    }
  }
  return accepted;
}

/** Waits until `path` received a document.ready for each id; returns the copies per document. */
export async function waitForReadyEvents(
  receiver: WebhookReceiver,
  path: string,
  ids: string[],
  timeoutMs = 240_000,
): Promise<Map<string, ReceivedWebhook[]>> {
  const deadline = Date.now() + timeoutMs;
  const wanted = new Set(ids);
  for (;;) {
    const byDocument = new Map<string, ReceivedWebhook[]>();
    for (const r of receiver.at(path)) {
      const id = r.body.data.id as string;
      if (r.body.type !== 'document.ready' || !wanted.has(id)) continue;
      byDocument.set(id, [...(byDocument.get(id) ?? []), r]);
    }
    if (byDocument.size === wanted.size) return byDocument;
    if (Date.now() > deadline) {
      throw new Error(
        `only ${byDocument.size} of ${wanted.size} documents had their event within ${timeoutMs} ms`,
      );
    }
    await sleep(100);
  }
}

/** Every copy verified and of status ready; copies of one document's event share one webhook-id. */
export function expectAtLeastOnce(byDocument: Map<string, ReceivedWebhook[]>): { duplicates: number } {
  let duplicates = 0;
  for (const [id, copies] of byDocument) {
    expect(
      copies.every((c) => c.verified),
      id,
    ).toBe(true);
    expect(
      copies.every((c) => c.body.data.status === 'ready'),
      id,
    ).toBe(true);
    expect(new Set(copies.map((c) => c.id)).size, `webhook-ids of ${id}`).toBe(1);
    duplicates += copies.length - 1;
  }
  return { duplicates };
}
