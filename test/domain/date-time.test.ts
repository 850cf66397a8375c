// The one reading of a client's date-time: RFC 3339 on the real calendar, offsets applied exactly.
import { describe, expect, it } from 'vitest';
import { isDateTime, parseDateTime, parseFullDate } from '../../src/domain/date-time.js';

describe('parseDateTime', () => {
  it('reads RFC 3339 date-times with their offsets and fractions', () => {
    const cases: [string, string][] = [
      ['2027-01-01T00:00:00Z', '2027-01-01T00:00:00.000Z'],
      ['2027-01-01t00:00:00z', '2027-01-01T00:00:00.000Z'],
      ['2027-01-01T09:30:00+05:30', '2027-01-01T04:00:00.000Z'],
      ['2027-01-01T00:30:00-01:00', '2027-01-01T01:30:00.000Z'],
      ['2026-12-31T23:59:59.999999999Z', '2026-12-31T23:59:59.999Z'],
      ['2096-02-29T12:00:00Z', '2096-02-29T12:00:00.000Z'],
      ['2000-02-29T12:00:00Z', '2000-02-29T12:00:00.000Z'],
      ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'],
    ];
    for (const [text, instant] of cases) expect(parseDateTime(text)?.toISOString(), text).toBe(instant);
  });

  it('refuses what is not on the calendar or not RFC 3339, leap seconds included', () => {
    for (const text of [
      '2027-01-01T23:59:60Z',
      '2016-12-31T23:59:60Z',
      '2027-01-01T24:00:00Z',
      '2027-01-01T12:60:00Z',
      '2027-02-29T00:00:00Z',
      '2100-02-29T00:00:00Z',
      '2027-04-31T00:00:00Z',
      '2027-13-01T00:00:00Z',
      '2027-00-10T00:00:00Z',
      '2027-01-00T00:00:00Z',
      '2027-01-01T00:00:00+24:00',
      '2027-01-01T00:00:00+01:60',
      '2027-01-01T00:00:00+0100',
      '2027-01-01T00:00:00',
      '2027-01-01 00:00:00Z',
      '2027-01-01T00:00Z',
      '2027-01-01T00:00:00.Z',
      '1969-12-31T23:59:59Z',
      '10000-01-01T00:00:00Z',
      '+275760-09-13T00:00:00Z',
      '2027-01-01',
      ' 2027-01-01T00:00:00Z',
      '',
    ]) {
      expect(parseDateTime(text), text).toBeNull();
      expect(isDateTime(text), text).toBe(false);
    }
  });
});

describe('parseFullDate', () => {
  it('reads a day that exists as its midnight UTC, and nothing else', () => {
    expect(parseFullDate('2027-03-01')?.toISOString()).toBe('2027-03-01T00:00:00.000Z');
    expect(parseFullDate('2096-02-29')?.toISOString()).toBe('2096-02-29T00:00:00.000Z');
    for (const text of ['2027-02-29', '2027-02-30', '2027-1-1', '2027-01-01T00:00:00Z', '20270101']) {
      expect(parseFullDate(text), text).toBeNull();
    }
  });
});
