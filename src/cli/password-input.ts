/**
 * Reads a password for `fleetgw admin create-user`: from a terminal, a prompt with echo off, typed
 * twice; otherwise all of stdin (one trailing newline dropped), e.g. `printf %s "$PW" | fleetgw …`.
 * Never from an argument: arguments show in `ps` to every user of the host and stay in shell history.
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { UsageError } from './usage.js';

/** Reads stdin to its end (bounded: a password is small). */
async function readAll(input: NodeJS.ReadableStream, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of input) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    n += b.length;
    if (n > maxBytes) throw new UsageError(`the password on stdin is longer than ${maxBytes} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** One line from the terminal with echo off. */
function promptHidden(question: string): Promise<string> {
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  process.stderr.write(question);
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  return new Promise((resolve) => {
    rl.once('line', (line) => {
      rl.close();
      process.stderr.write('\n');
      resolve(line);
    });
  });
}

/** The new user's password, from the terminal (twice) or stdin. */
export async function readNewPassword(maxBytes: number): Promise<string> {
  if (process.stdin.isTTY !== true) return readAll(process.stdin, maxBytes);
  const first = await promptHidden('password: ');
  const second = await promptHidden('password again: ');
  if (first !== second) throw new UsageError('the two passwords differ');
  return first;
}
