// The loop the webhook dispatcher and the vector stage run on: one pass at a time, the next after
// the delay a pass asks for, at once when woken (right after the running pass, never beside it),
// none after stop(), and a failed pass reported and tried again.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { PollingLoop } from '../../src/domain/polling-loop.js';

/** Resolves once `check` holds, looking every 5 ms for up to 5 s. */
async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 5) {
    if (waited > 5_000) throw new Error('the condition did not hold within 5 s');
    await sleep(5);
  }
}

const loops: PollingLoop[] = [];
afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop()));
});

function started(pass: () => Promise<number | null>, options = {}): PollingLoop {
  const loop = new PollingLoop(pass, options);
  loops.push(loop);
  loop.start();
  return loop;
}

describe('PollingLoop', () => {
  it('runs a pass at start, then again after the delay the pass asked for', async () => {
    const at: number[] = [];
    started(async () => {
      at.push(performance.now());
      return 80;
    });
    await until(() => at.length >= 3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(75);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(75);
  });

  it('a pass that asks for no next one waits until woken', async () => {
    let passes = 0;
    const loop = started(async () => {
      passes += 1;
      return null;
    });
    await until(() => passes === 1);
    await sleep(100);
    expect(passes).toBe(1);
    loop.wake();
    await until(() => passes === 2);
  });

  it('never runs two passes at once: a wake during a pass runs one more right after it', async () => {
    let running = 0;
    let most = 0;
    let passes = 0;
    let release: () => void = () => {};
    const loop = started(async () => {
      running += 1;
      most = Math.max(most, running);
      passes += 1;
      if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
      running -= 1;
      return null;
    });
    await until(() => passes === 1);
    loop.wake();
    loop.wake();
    loop.wake();
    await sleep(50);
    expect(passes).toBe(1);
    release();
    await until(() => passes === 2);
    await sleep(100);
    expect(passes).toBe(2);
    expect(most).toBe(1);
  });

  it('stop() waits for the running pass and no pass starts after it', async () => {
    let passes = 0;
    let ended = false;
    const loop = started(async () => {
      passes += 1;
      await sleep(60);
      ended = true;
      return 0;
    });
    await until(() => passes === 1);
    await loop.stop();
    expect(ended).toBe(true);
    loop.wake();
    await sleep(100);
    expect(passes).toBe(1);
    expect(loop.active()).toBe(false);
  });

  it('a pass that rejects is reported and tried again after the retry delay', async () => {
    const errors: unknown[] = [];
    let passes = 0;
    started(
      async () => {
        passes += 1;
        if (passes === 1) throw new Error('store unavailable');
        return null;
      },
      { retryMs: 30, onError: (error: unknown) => errors.push(error) },
    );
    await until(() => passes === 2);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('store unavailable');
  });
});
