// In-memory stand-ins for the ports the domain services use, for testing the services' own rules
// (what is committed, enqueued, refused or cleaned up) apart from any backend. Each records what
// was asked of it and can be told to fail. The adapters themselves are tested for real in
// test/contract/.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type {
  AnalysisState,
  BlobStore,
  BlobWrite,
  Clock,
  DocumentStore,
  EnqueueHint,
  JobQueue,
  KeywordIndex,
  UsageStore,
} from '../../src/domain/ports.js';
import { BlobNotFoundError, BlobTooLargeError } from '../../src/domain/ports.js';
import type {
  DocumentRecord,
  JobRef,
  KeywordHit,
  NewDocument,
  NewVersion,
  SearchQuery,
  StartedVersion,
} from '../../src/domain/types.js';

export class FixedClock implements Clock {
  constructor(public at: Date) {}
  now(): Date {
    return this.at;
  }
}

/** The part of DocumentStore ingestion and the reconciler use; the rest throws if reached. */
export class FakeDocuments {
  readonly created: NewDocument[] = [];
  pending = 0;
  failCreate: Error | null = null;
  stale: (JobRef & { needsDownload: boolean })[] = [];

  /** New documents only: these tests send no external_id. */
  async createDocuments(docs: NewDocument[]): Promise<StartedVersion[]> {
    if (this.failCreate) throw this.failCreate;
    this.created.push(...docs);
    this.pending += docs.length;
    return docs.map((d) => ({ id: d.id, version: 1, created: true, discardedBlobKeys: [] }));
  }

  /** Documents that exist already (ready, in `default`, no access list), by id. */
  readonly existing = new Set<string>();
  readonly versions: Array<{ id: string; version: NewVersion }> = [];

  async getDocument(orgId: string, id: string): Promise<DocumentRecord | null> {
    if (!this.existing.has(id)) return null;
    return {
      id,
      orgId,
      partition: 'default',
      access: null,
      chunkSize: 512,
      chunkOverlap: 64,
    } as DocumentRecord;
  }

  async startVersion(_orgId: string, id: string, version: NewVersion): Promise<StartedVersion | null> {
    if (!this.existing.has(id)) return null;
    this.versions.push({ id, version });
    this.pending += 1;
    return { id, version: 2, created: false, discardedBlobKeys: [] };
  }

  async countPending(): Promise<number> {
    return this.pending;
  }

  async listStaleQueued(): Promise<(JobRef & { needsDownload: boolean })[]> {
    return this.stale;
  }

  /** How many times the reconciler asked to finish deletes left by a crashed write. */
  finishDeletesCalls = 0;

  async finishDeletes(): Promise<number> {
    this.finishDeletesCalls += 1;
    return 0;
  }

  asPort(): DocumentStore {
    return new Proxy(this, {
      get: (target, name) => {
        if (name in target) return Reflect.get(target, name);
        throw new Error(`DocumentStore.${String(name)} is not expected here`);
      },
    }) as unknown as DocumentStore;
  }
}

export class FakeQueue implements JobQueue {
  readonly enqueued: { jobs: JobRef[]; created: boolean; version: boolean }[] = [];
  readonly known = new Set<string>();
  failEnqueue: Error | null = null;

  async enqueue(jobs: JobRef[], opts: EnqueueHint = {}): Promise<void> {
    if (this.failEnqueue) throw this.failEnqueue;
    this.enqueued.push({ jobs, created: opts.created === true, version: opts.version === true });
    for (const job of jobs) this.known.add(job.documentId);
  }

  consume(): never {
    throw new Error('not used by the services under test');
  }

  async has(documentId: string): Promise<boolean> {
    return this.known.has(documentId);
  }

  async close(): Promise<void> {}

  ids(): string[] {
    return this.enqueued.flatMap((e) => e.jobs.map((j) => j.documentId));
  }
}

export class MemoryBlobs implements BlobStore {
  readonly blobs = new Map<string, Buffer>();
  readonly deleted: string[] = [];

  async put(key: string, source: Readable, opts: { maxBytes?: number } = {}): Promise<BlobWrite> {
    const parts: Buffer[] = [];
    let bytes = 0;
    for await (const part of source) {
      const buffer = Buffer.from(part as Uint8Array);
      bytes += buffer.length;
      if (opts.maxBytes !== undefined && bytes > opts.maxBytes) throw new BlobTooLargeError(opts.maxBytes);
      parts.push(buffer);
    }
    const data = Buffer.concat(parts);
    this.blobs.set(key, data);
    return { key, bytes, sha256: createHash('sha256').update(data).digest('hex') };
  }

  async openRead(key: string): Promise<Readable> {
    const data = this.blobs.get(key);
    if (!data) throw new BlobNotFoundError(key);
    return Readable.from([data]);
  }

  async withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    if (!this.blobs.has(key)) throw new BlobNotFoundError(key);
    return fn(`/memory/${key}`);
  }

  async delete(key: string): Promise<void> {
    this.blobs.delete(key);
    this.deleted.push(key);
  }
}

export class MemoryUsage implements UsageStore {
  readonly counts = new Map<string, number>();

  /** `${orgId} ${day} ${bucket}`: count, for the queries restricted to partitions. */
  readonly bucketCounts = new Map<string, number>();

  async increment(orgId: string, day: string, bucket: string | null = null): Promise<void> {
    const key = `${orgId} ${day}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (bucket !== null) {
      const inBucket = `${key} ${bucket}`;
      this.bucketCounts.set(inBucket, (this.bucketCounts.get(inBucket) ?? 0) + 1);
    }
  }

  async countsBetween(
    orgId: string,
    fromDay: string,
    toDay: string,
    buckets?: readonly string[],
  ): Promise<Map<string, number>> {
    const result = new Map<string, number>();
    const rows = buckets === undefined ? this.counts : this.bucketCounts;
    for (const [key, count] of rows) {
      const [org, day, bucket] = key.split(' ') as [string, string, string | undefined];
      if (org !== orgId || day < fromDay || day > toDay) continue;
      if (buckets !== undefined && !buckets.includes(bucket ?? '')) continue;
      result.set(day, (result.get(day) ?? 0) + count);
    }
    return result;
  }

  async bucketTotals(orgId: string, fromDay: string, toDay: string): Promise<Map<string, number>> {
    const result = new Map<string, number>();
    for (const [key, count] of this.bucketCounts) {
      const [org, day, bucket] = key.split(' ') as [string, string, string];
      if (org === orgId && day >= fromDay && day <= toDay)
        result.set(bucket, (result.get(bucket) ?? 0) + count);
    }
    return result;
  }

  async purgeOrg(orgId: string): Promise<number> {
    let removed = 0;
    for (const key of [...this.counts.keys()]) {
      if (key.startsWith(`${orgId} `)) {
        this.counts.delete(key);
        removed += 1;
      }
    }
    for (const key of [...this.bucketCounts.keys()]) {
      if (key.startsWith(`${orgId} `)) this.bucketCounts.delete(key);
    }
    return removed;
  }
}

export class FakeKeywordIndex implements KeywordIndex {
  readonly queries: SearchQuery[] = [];
  hits: KeywordHit[] = [];
  fail: Error | null = null;

  async search(q: SearchQuery): Promise<KeywordHit[]> {
    this.queries.push(q);
    if (this.fail) throw this.fail;
    return this.hits;
  }

  async adoptAnalysis(): Promise<void> {}

  async analysisState(): Promise<AnalysisState> {
    return { configured: 'languages', written: 'languages', reindexNeeded: false };
  }

  async reindexBatch(): Promise<{ rewritten: number; done: boolean }> {
    return { rewritten: 0, done: true };
  }
}
