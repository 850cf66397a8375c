// Picks the BlobStore named by BLOB_STORE: a folder (fs), the scale-out database (postgres) or an
// S3-compatible bucket (s3). The SDK and the PostgreSQL adapter are loaded only when chosen.
import { FsBlobStore } from '../adapters/blob/fs-blob-store.js';
import type { PgDatabase } from '../adapters/postgres/database.js';
import type { Config } from '../config/index.js';
import type { BlobStore } from '../domain/ports.js';

export interface BlobStoreHandle {
  blobs: BlobStore;
  /** Releases what the store holds (the S3 client's sockets); the database is closed by its owner. */
  close(): Promise<void>;
}

/** `database`: the scale-out database, which BLOB_STORE=postgres stores blobs in (null when embedded). */
export async function createBlobStore(config: Config, database: PgDatabase | null): Promise<BlobStoreHandle> {
  switch (config.blobStore) {
    case 'fs':
      return { blobs: new FsBlobStore(config.blobDir), close: async () => {} };
    case 'postgres': {
      // The configuration refuses BLOB_STORE=postgres without DATABASE_URL; this guards callers
      // that build a Config by hand.
      if (database === null) throw new Error('BLOB_STORE=postgres needs DATABASE_URL');
      const { PgBlobStore } = await import('../adapters/postgres/blob-store.js');
      return { blobs: new PgBlobStore(database), close: async () => {} };
    }
    case 's3': {
      const { S3BlobStore } = await import('../adapters/blob/s3-blob-store.js');
      const store = new S3BlobStore({
        bucket: config.s3Bucket,
        region: config.s3Region,
        endpoint: config.s3Endpoint,
        forcePathStyle: config.s3ForcePathStyle,
        ...(config.s3AccessKeyId
          ? {
              credentials: {
                accessKeyId: config.s3AccessKeyId,
                secretAccessKey: config.s3SecretAccessKey,
              },
            }
          : {}),
      });
      return { blobs: store, close: async () => store.close() };
    }
  }
}
