// The s3 source type on s3rver (127.0.0.1): a listing that runs over several pages, folders and
// other prefixes left out, an object's bytes, the ETag as change token; and the address rule
// applied to every connection, so an endpoint whose name resolves to a refused address is never
// connected to.
import { randomUUID } from 'node:crypto';
import { text } from 'node:stream/consumers';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { s3SourceType } from '../../../src/adapters/sources/s3/s3-source.js';
import { describeS3, type S3rverProcess, startS3rver } from '../../helpers/s3rver.js';

describeS3('s3 source type (s3rver)', () => {
  let server: S3rverProcess;
  let admin: S3Client;
  const bucket = `t-${randomUUID()}`;

  beforeAll(async () => {
    server = await startS3rver();
    admin = new S3Client({
      region: 'us-east-1',
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    const objects: Record<string, string> = { 'docs/folder/': '', 'other/x.txt': 'outside' };
    for (let i = 0; i < 7; i++) objects[`docs/${i}.txt`] = `text ${i}`;
    for (const [Key, Body] of Object.entries(objects)) {
      await admin.send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
    }
  });
  afterAll(async () => {
    admin?.destroy();
    await server?.stop();
  });

  const config = { bucket, prefix: 'docs/', force_path_style: true };
  const credentials = { access_key_id: 'S3RVER', secret_access_key: 'S3RVER' };
  const allowAll = { isAllowed: () => true, allowsName: () => true };
  const refuse = { isAllowed: () => false, allowsName: () => false };

  it('lists every object under the prefix across pages, with its ETag, and opens one', async () => {
    const type = s3SourceType({ policy: allowAll, pageSize: 2 });
    const connection = type.connect({ ...config, endpoint: server.endpoint }, credentials);
    try {
      const listed = [];
      for await (const item of connection.list(new AbortController().signal, new Map())) listed.push(item);
      expect(listed.map((i) => i.key)).toEqual(Array.from({ length: 7 }, (_, i) => `docs/${i}.txt`));
      for (const item of listed) expect(item.etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(await text(await connection.open('docs/3.txt', new AbortController().signal))).toBe('text 3');
    } finally {
      connection.close();
    }
  });

  it('never connects to an address the rule refuses, by literal address or by name', async () => {
    const refuseAll = s3SourceType({ policy: refuse });
    expect(() => refuseAll.connect({ ...config, endpoint: server.endpoint }, credentials)).toThrow(
      /not an allowed address/,
    );
    const port = new URL(server.endpoint).port;
    const byName = refuseAll.connect({ ...config, endpoint: `http://localhost:${port}` }, credentials);
    try {
      const listing = (async () => {
        for await (const _ of byName.list(new AbortController().signal, new Map())) return 'listed';
        return 'empty';
      })();
      await expect(listing).rejects.toThrow(/resolves to an address that is not public/);
    } finally {
      byName.close();
    }
  });

  it('splits credentials from the configuration it shows', () => {
    const type = s3SourceType({ policy: allowAll });
    const prepared = type.prepare({ bucket: 'b', region: 'eu-west-1', ...credentials });
    expect(prepared.config).toEqual({ bucket: 'b', region: 'eu-west-1' });
    expect(prepared.credentials).toEqual(credentials);
    expect(prepared.urls).toEqual([]);
    expect(type.prepare({ bucket: 'b', endpoint: 'http://127.0.0.1:9000' }).urls).toEqual([
      { url: 'http://127.0.0.1:9000', pointer: '/config/endpoint' },
    ]);
    expect(() => type.prepare({ bucket: 'b', access_key_id: 'x' })).toThrow(/both/);
    expect(() => type.prepare({ bucket: 'b', endpoint: 'http://h:9000/path' })).toThrow(
      /scheme, host and port/,
    );
  });
});
