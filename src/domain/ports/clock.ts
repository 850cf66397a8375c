// The clock port: services and stores read the time through it, so a test can fix it.

export interface Clock {
  now(): Date;
}

/** The clock of the machine; tests hand a store or a service a fixed one instead. */
export const systemClock: Clock = { now: () => new Date() };
