// The `vectors` part of a document's status record: where its second stage stands for the active
// embedding profile. `disabled` without a provider; `pending` until the document is ready and its
// vectors are written (with the last error while a provider outage lasts); then `ready`, or
// `failed` with the error (and `failed` when the document itself failed: nothing to embed).
import type { Embedder, VectorStageStore } from './ports.js';
import type { DocumentRecord } from './types.js';

export interface VectorsStatus {
  status: 'pending' | 'ready' | 'failed' | 'disabled';
  /** The active embedding model; null when disabled. */
  model: string | null;
  error: { code: string; message: string } | null;
}

export class VectorStatusService {
  private profile: number | null = null;

  constructor(
    private readonly embedder: Embedder | null,
    private readonly store: VectorStageStore,
  ) {}

  /** Each record's vectors status, by document id. */
  async statusOf(records: readonly DocumentRecord[]): Promise<Map<string, VectorsStatus>> {
    const out = new Map<string, VectorsStatus>();
    if (this.embedder === null) {
      for (const r of records) out.set(r.id, { status: 'disabled', model: null, error: null });
      return out;
    }
    const model = this.embedder.model;
    const profile = await this.activeProfile();
    const ready = records.filter((r) => r.status === 'ready').map((r) => r.id);
    const states =
      profile === null || ready.length === 0 ? new Map() : await this.store.vectorStates(ready, profile);
    for (const r of records) {
      const state = states.get(r.id);
      // A document whose processing failed has no chunks: its vectors fail with it.
      out.set(r.id, {
        status: r.status === 'failed' ? 'failed' : (state?.status ?? 'pending'),
        model,
        error: state?.error ?? null,
      });
    }
    return out;
  }

  /**
   * The active profile's number. The API process never calls the provider for it: the length is
   * the configured one, else the one the vector stage registered for this provider and model.
   */
  private async activeProfile(): Promise<number | null> {
    if (this.profile !== null || this.embedder === null) return this.profile;
    const dimensions = this.embedder.dimensions();
    this.profile =
      dimensions === null
        ? await this.store.findProfile(this.embedder.provider, this.embedder.model)
        : await this.store.profileId({
            provider: this.embedder.provider,
            model: this.embedder.model,
            dimensions,
          });
    return this.profile;
  }
}

/**
 * The vector state a webhook event carries: what the event itself says (ready for
 * `document.vectors_ready`; pending after `document.ready`, as a new version's chunks wait for
 * their vectors; failed with a failed document), decided from the message alone so that every
 * attempt of it sends the same bytes. GET /v1/documents/{id} tells the state of the moment.
 */
export function vectorsAtEvent(
  embedder: Embedder | null,
  record: DocumentRecord,
  type: string,
): VectorsStatus {
  if (embedder === null) return { status: 'disabled', model: null, error: null };
  if (type === 'document.vectors_ready') return { status: 'ready', model: embedder.model, error: null };
  if (record.status === 'failed') return { status: 'failed', model: embedder.model, error: null };
  return { status: 'pending', model: embedder.model, error: null };
}
