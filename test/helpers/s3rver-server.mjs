// Runs s3rver, an S3-protocol server for tests, on 127.0.0.1 in a process of its own (started by
// test/helpers/s3rver.ts). Stores under the folder given as the first argument, prints
// {"port": n} on stdout once listening, and stops on SIGTERM or when its stdin closes (the test
// process went away).
import S3rver from 's3rver';

const directory = process.argv[2];
if (!directory) {
  console.error('usage: s3rver-server.mjs <directory>');
  process.exit(2);
}
const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory,
  configureBuckets: [{ name: 'docindex-test' }],
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await server.close().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
