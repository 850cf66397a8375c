// Fairness between orgs on BullMQ, which takes jobs by priority (lowest first, then in the order
// they were added) and has no groups: each job gets a priority from its org's place in a round
// robin. A queue's "round" is the highest priority a worker has started. An org with jobs still
// waiting (its last priority at or past the round) queues its next one two steps after its last;
// an org with none waiting gets round + 1, an odd step between the backlog's even ones. So the
// k-th job one org queues at once waits behind at most k − 1 jobs of every other org, and an org
// arriving behind another's backlog goes ahead of all of it that has not started.
import { PRIORITY_LIMIT, type Queue } from 'bullmq';
import { LuaCommands } from './lua-commands.js';

/** KEYS: round, org hash, prioritized set, wait list; ARGV: the org of each job. */
const ASSIGN_LUA = `
local round = tonumber(redis.call('GET', KEYS[1]) or '0')
if redis.call('ZCARD', KEYS[3]) == 0 and redis.call('LLEN', KEYS[4]) == 0 then
  -- Nothing waits: every org starts level again, far from BullMQ's priority limit.
  round = 0
  redis.call('DEL', KEYS[1], KEYS[2])
end
local limit = ${PRIORITY_LIMIT}
local out = {}
for i = 1, #ARGV do
  local last = tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '-1')
  local p = round + 1
  if last >= round then p = last + 2 end
  if p > limit then p = limit end
  redis.call('HSET', KEYS[2], ARGV[i], p)
  out[i] = p
end
return out
`;

/** KEYS: round; ARGV: the priority of a job a worker starts. */
const STARTED_LUA = `
local round = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > round then redis.call('SET', KEYS[1], ARGV[1]) end
return 0
`;

const ASSIGN = 'docindexFairAssign';
const STARTED = 'docindexFairStarted';

export class FairPriorities {
  private readonly scripts: LuaCommands;

  constructor(private readonly queue: Queue) {
    this.scripts = new LuaCommands(queue, {
      [ASSIGN]: { numberOfKeys: 4, lua: ASSIGN_LUA },
      [STARTED]: { numberOfKeys: 1, lua: STARTED_LUA },
    });
  }

  /** Priorities for jobs of these orgs, in order, as they are added now. */
  async assign(orgIds: readonly string[]): Promise<number[]> {
    const { keys } = this.queue;
    const priorities = (await this.scripts.run(ASSIGN, [
      this.key('round'),
      this.key('orgs'),
      keys.prioritized,
      keys.wait,
      ...orgIds,
    ])) as number[];
    return priorities.map(Number);
  }

  /** A worker started a job of this priority: the round moves on to it. */
  async started(priority: number): Promise<void> {
    if (!(priority > 0)) return;
    await this.scripts.run(STARTED, [this.key('round'), priority]);
  }

  private key(name: string): string {
    return `${this.queue.keys['']}fair:${name}`;
  }
}
