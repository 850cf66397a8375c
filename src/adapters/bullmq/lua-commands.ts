// Our Lua scripts on the queue's Redis connection, defined once per client: BullMQ replaces its
// client when it reconnects anew, and a new client knows none of them.
import type { Queue } from 'bullmq';

export type LuaCommandSet = Record<string, { numberOfKeys: number; lua: string }>;

export class LuaCommands {
  private readonly defined = new WeakSet<object>();

  constructor(
    private readonly queue: Queue,
    private readonly commands: LuaCommandSet,
  ) {}

  /** Runs one of the commands with its keys, then its arguments. */
  async run(name: string, args: readonly unknown[]): Promise<unknown> {
    const client = await this.queue.getBackend().client;
    if (!this.defined.has(client)) {
      for (const [command, definition] of Object.entries(this.commands))
        client.defineCommand(command, definition);
      this.defined.add(client);
    }
    return client.runCommand(name, [...args]);
  }
}
