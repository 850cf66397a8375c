// Idle footprint: the RSS of an embedded `serve` (workers running, default settings) that has
// nothing to do, with no documents yet and after 100 documents were processed, each once its
// pipeline threads have had EXTRACT_IDLE_STOP_MS to stop. The same run measures the threads kept
// running (EXTRACT_IDLE_STOP_MS=0), the setting that switches the stop off. Several servers per
// setting run side by side: idle RSS does not depend on the CPUs another server uses.
import os from 'node:os';
import { corpusDocuments } from './corpus.js';
import { type Benchmark, fmt, median, sleep } from './lib.js';
import {
  callApi,
  type DocindexServer,
  type IngestAck,
  residentBytes,
  startDocindex,
  waitUntilDone,
} from './server.js';

const MIB = 1024 * 1024;
const GOAL_IDLE_MIB = 150;
/** EXTRACT_IDLE_STOP_MS for the stopping setting (the default is longer), and the margin after it before RSS is read. */
const IDLE_STOP_MS = 30_000;
const SETTLE_MS = 10_000;
const DOCUMENTS = 100;

interface Setting {
  name: string;
  env: Record<string, string>;
}

interface Figures {
  empty: number[];
  afterDocuments: number[];
}

/** Median of a few VmRSS readings a quarter of a second apart: one reading can catch a GC. */
async function idleRss(server: DocindexServer): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(residentBytes(server.pid) / MIB);
    await sleep(250);
  }
  return median(readings);
}

async function measure(setting: Setting, starts: number, documents: string[]): Promise<Figures> {
  // One at a time: servers starting side by side on a busy machine are slow to load their threads.
  const servers: DocindexServer[] = [];
  try {
    for (let i = 0; i < starts; i++) {
      servers.push(await startDocindex({ env: setting.env, timeoutMs: 180_000 }));
    }
    await sleep(IDLE_STOP_MS + SETTLE_MS);
    const empty = await Promise.all(servers.map(idleRss));
    await Promise.all(
      servers.map(async (server) => {
        const ids: string[] = [];
        for (let i = 0; i < documents.length; i += 50) {
          const batch = documents.slice(i, i + 50).map((text) => ({ text }));
          const ack = await callApi<IngestAck>(server, 'POST', '/v1/ingest', { documents: batch }, 202);
          ids.push(...ack.document_ids);
        }
        const { done } = await waitUntilDone(server, () => ids, {
          expected: ids.length,
          timeoutMs: 300_000,
        });
        const failed = [...done.values()].filter((d) => d.status !== 'ready').length;
        if (failed > 0) throw new Error(`${failed} documents failed`);
      }),
    );
    await sleep(IDLE_STOP_MS + SETTLE_MS);
    const afterDocuments = await Promise.all(servers.map(idleRss));
    return { empty, afterDocuments };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

const spread = (values: number[]) => `${fmt(Math.min(...values), 1)}–${fmt(Math.max(...values), 1)}`;

export const run: Benchmark = async (options) => {
  const title = 'Idle footprint: RSS of an idle embedded server, empty and after 100 documents';
  const starts = options?.quick ? 2 : 5;
  const loadBefore = os
    .loadavg()
    .map((l) => fmt(l, 2))
    .join(' / ');
  const documents = corpusDocuments(DOCUMENTS, 10_000);
  const settings: Setting[] = [
    { name: 'threads kept running (`EXTRACT_IDLE_STOP_MS=0`)', env: { EXTRACT_IDLE_STOP_MS: '0' } },
    {
      name: `idle threads stopped after ${IDLE_STOP_MS / 1000} s (\`EXTRACT_IDLE_STOP_MS=${IDLE_STOP_MS}\`)`,
      env: { EXTRACT_IDLE_STOP_MS: String(IDLE_STOP_MS) },
    },
  ];
  const results = await Promise.all(settings.map((s) => measure(s, starts, documents)));
  const rows = settings.flatMap((setting, i) => {
    const { empty, afterDocuments } = results[i]!;
    return [
      `| ${setting.name} | no documents | ${fmt(median(empty), 1)} | ${spread(empty)} |`,
      `| ${setting.name} | after ${DOCUMENTS} documents | ${fmt(median(afterDocuments), 1)} | ${spread(afterDocuments)} |`,
    ];
  });
  const idleEmpty = median(results[1]!.empty);
  return {
    title,
    lines: [
      `${starts} servers per setting, each a fresh \`docindex serve\` on a fresh DATA_DIR (embedded, workers running, other settings default), the two settings' servers side by side once started. RSS is VmRSS (/proc/<pid>/status, every thread included, and the pipeline processes that read files), the median of 5 readings 250 ms apart, read ${fmt((IDLE_STOP_MS + SETTLE_MS) / 1000, 0)} s after the last server listened ("no documents"), then ${fmt((IDLE_STOP_MS + SETTLE_MS) / 1000, 0)} s after ${DOCUMENTS} documents of ~10,000 characters of the corpus (two POST /v1/ingest of 50) were all \`ready\` ("after ${DOCUMENTS} documents").`,
      '',
      '| setting | idle server | median RSS MiB | min–max MiB |',
      '|---|---|---:|---|',
      ...rows,
      '',
      `- Goal: an idle server with no documents under ${GOAL_IDLE_MIB} MiB RSS: **${fmt(idleEmpty, 1)} MiB**, ${idleEmpty < GOAL_IDLE_MIB ? 'met' : 'NOT met'}.`,
      `- Machine load (1 / 5 / 15-minute load average, ${os.cpus().length} CPUs, shared with other work): ${loadBefore} before, ${os
        .loadavg()
        .map((l) => fmt(l, 2))
        .join(' / ')} after.`,
    ],
  };
};
