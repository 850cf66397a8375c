// An OTLP/HTTP trace receiver on 127.0.0.1, as a collector would be: it accepts `POST /v1/traces`
// (JSON, what docindex's exporter sends) and keeps every span with its resource's attributes,
// for tests that check what a deployment's processes report.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};

type AttributeValue = string | number | boolean | AttributeValue[] | null;

interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind numbers: 1 internal, 2 server, 5 consumer. */
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  resource: Record<string, AttributeValue>;
  /** 2 when the span was marked failed. */
  statusCode: number;
}

function attributeValue(value: AnyValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(attributeValue);
  return null;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, attributeValue(kv.value)]));
}

/** Ids come as hex in OTLP/JSON; base64 is accepted too. */
function hexId(id: string | undefined): string {
  if (!id) return '';
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every request body as received, to search for what must never be sent. */
  readonly bodies: string[] = [];
  private server: Server | null = null;

  get url(): string {
    const address = this.server?.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const body = Buffer.concat(parts).toString('utf8');
    this.bodies.push(body);
    const parsed = JSON.parse(body) as {
      resourceSpans?: Array<{
        resource?: { attributes?: KeyValue[] };
        scopeSpans?: Array<{
          spans?: Array<{
            traceId?: string;
            spanId?: string;
            parentSpanId?: string;
            name: string;
            kind: number;
            startTimeUnixNano: string | number;
            endTimeUnixNano: string | number;
            attributes?: KeyValue[];
            status?: { code?: number };
          }>;
        }>;
      }>;
    };
    for (const resourceSpans of parsed.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: hexId(span.traceId),
            spanId: hexId(span.spanId),
            parentSpanId: hexId(span.parentSpanId),
            name: span.name,
            kind: span.kind,
            startMs: Number(BigInt(span.startTimeUnixNano) / 1_000_000n),
            endMs: Number(BigInt(span.endTimeUnixNano) / 1_000_000n),
            attributes: attributesOf(span.attributes),
            resource,
            statusCode: span.status?.code ?? 0,
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }
}
