// Command ids are UUIDv7: valid UUID strings, version 7, RFC variant, time-ordered, unique.
import { describe, expect, it } from 'vitest';
import { newCommandId } from '../../src/commands/command-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newCommandId', () => {
  it('makes version-7 UUIDs carrying the time in their first 48 bits', () => {
    const at = Date.UTC(2026, 10, 23, 4, 40, 0, 123);
    const id = newCommandId(at);
    expect(id).toMatch(UUID);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it('sorts by time as text and does not repeat', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => newCommandId(1_700_000_000_000 + Math.floor(i / 10)));
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 10; i < ids.length; i += 10) expect((ids[i - 10] as string) < (ids[i] as string)).toBe(true);
    for (const id of ids.slice(0, 100)) expect(id).toMatch(UUID);
  });
});
