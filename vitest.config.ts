import { defineConfig } from 'vitest/config';

// Two projects, one run (`npm test`):
//   embedded   every test file; scale-out suites in it (test/contract/postgres|redis|bullmq,
//              test/scale-out) skip and say so unless DATABASE_URL / REDIS_URL are set
//   scale-out  the HTTP suite again, unchanged, against PostgreSQL + Redis (test/helpers/harness.ts
//              switches on TEST_BACKEND), when both URLs are set
// REQUIRE_SCALE_OUT_TESTS=1 (CI) keeps the scale-out project even without the URLs, so that it
// fails instead of quietly not running.
const scaleOut = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const required = process.env.REQUIRE_SCALE_OUT_TESTS === '1';
// Said once: vitest evaluates this file again for each project that extends it.
const notice = globalThis as { docindexScaleOutNotice?: boolean };
if (!scaleOut && !notice.docindexScaleOutNotice) {
  notice.docindexScaleOutNotice = true;
  console.warn(
    required
      ? 'scale-out project: DATABASE_URL and REDIS_URL must both be set (REQUIRE_SCALE_OUT_TESTS=1); it will fail'
      : 'scale-out project skipped: DATABASE_URL and REDIS_URL are not both set',
  );
}

export default defineConfig({
  test: {
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'embedded',
          include: ['test/**/*.test.ts'],
          // Embedded means embedded, whatever the shell exports (TEST_BACKEND for the harness;
          // the URLs for the `docindex` processes test/e2e spawns, which inherit this
          // environment). The scale-out suites of this project read the URLs from the copies.
          env: {
            TEST_BACKEND: '',
            DATABASE_URL: '',
            REDIS_URL: '',
            SCALE_OUT_DATABASE_URL: process.env.DATABASE_URL ?? '',
            SCALE_OUT_REDIS_URL: process.env.REDIS_URL ?? '',
          },
        },
      },
      ...(scaleOut || required
        ? [
            {
              extends: true,
              test: {
                name: 'scale-out',
                include: ['test/http/**/*.test.ts'],
                env: { TEST_BACKEND: 'scale-out' },
              },
            },
          ]
        : []),
    ],
  },
});
