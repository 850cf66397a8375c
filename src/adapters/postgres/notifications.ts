// PostgreSQL LISTEN on a connection of its own, outside the pool: a writer's NOTIFY reaches every
// process listening on the channel once its transaction commits. A wake-up, never a message: the
// caller still looks at the tables, so a notification lost while the connection was down costs a
// poll interval, nothing more. A lost connection is opened again with a growing delay. Each time
// the LISTEN starts (the first time too) the callback runs once: whatever was written while no
// connection listened gets looked at then.
import pg from 'pg';

const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

export interface ChannelListenerOptions {
  connectionString: string;
  channel: string;
  applicationName: string;
  connectTimeoutMs: number;
  onNotify: () => void;
  onError?: (error: unknown) => void;
}

/** PostgreSQL's limit on a channel name (NAMEDATALEN - 1 bytes). */
const MAX_CHANNEL_BYTES = 63;

/**
 * The channel of `topic` for one schema's tables (schema names are ASCII). Two schemas cut to the
 * same name only wake each other's listeners for nothing: a wake-up carries no message.
 */
export function schemaChannel(topic: string, schema: string): string {
  return `docindex_${topic}_${schema}`.slice(0, MAX_CHANNEL_BYTES);
}

export class PgChannelListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryMs = RETRY_FIRST_MS;
  private timer: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;

  constructor(private readonly options: ChannelListenerOptions) {
    if (Buffer.byteLength(options.channel) > MAX_CHANNEL_BYTES) {
      throw new Error(`channel name longer than ${MAX_CHANNEL_BYTES} bytes: ${options.channel}`);
    }
  }

  /** Connects in the background; resolves once the first attempt has succeeded or failed. */
  start(): Promise<void> {
    if (this.connecting === null && this.client === null && !this.stopped) this.connecting = this.connect();
    return this.connecting ?? Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.connecting;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      application_name: this.options.applicationName,
      connectionTimeoutMillis: this.options.connectTimeoutMs,
      keepAlive: true,
    });
    // Until `end` below takes over, an error event with no listener would end the process.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, null));
    client.on('notification', (message) => {
      if (message.channel === this.options.channel) this.options.onNotify();
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.options.channel.replaceAll('"', '""')}"`);
      if (this.stopped) {
        await client.end().catch(() => {});
        return;
      }
      this.client = client;
      this.retryMs = RETRY_FIRST_MS;
      this.options.onNotify();
    } catch (error) {
      this.options.onError?.(error);
      await client.end().catch(() => {});
      this.retry();
    } finally {
      this.connecting = null;
    }
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    if (error !== null) this.options.onError?.(error);
    client.end().catch(() => {});
    this.retry();
  }

  private retry(): void {
    if (this.stopped || this.timer !== null) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.stopped) this.connecting = this.connect();
    }, delay);
    this.timer.unref();
  }
}
