// docs/ARCHITECTURE.md's plugin table names every plugin of `fleetgw serve` with exactly the plugins it
// depends on, so the drawing of the gateway cannot drift from the composer's order.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../src/gateway/parts.js';
import { gatewayPlugins } from '../../src/gateway/plugins/index.js';

const doc = readFileSync(new URL('../../docs/ARCHITECTURE.md', import.meta.url), 'utf8');

/** plugin -> the names in its "depends on" cell, from the table whose header starts `| plugin | depends on |`. */
function tableDeps(): Map<string, string[]> {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.startsWith('| plugin | depends on |'));
  expect(start, 'the plugin table of docs/ARCHITECTURE.md').toBeGreaterThan(-1);
  const out = new Map<string, string[]>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [name, deps] = line.split('|').slice(1, 3).map((c) => c.trim());
    out.set(name!.replaceAll('`', ''), deps!.split(',').map((d) => d.trim()).filter((d) => d !== ''));
  }
  return out;
}

describe('docs/ARCHITECTURE.md plugin table', () => {
  // The factories only keep the context until start: names and dependencies need no real one.
  const plugins = gatewayPlugins({ opts: {} } as unknown as GatewayContext);

  it('lists every plugin, and only those', () => {
    expect([...tableDeps().keys()].sort()).toEqual(plugins.map((p) => p.name).sort());
  });

  it("names each plugin's dependencies as its declaration does", () => {
    const table = tableDeps();
    for (const p of plugins) {
      const cell = table.get(p.name) ?? [];
      // `http` depends on every plugin that declares routes: the cell says so in words.
      if (p.name === 'http') continue;
      expect([...cell].sort(), `${p.name}'s "depends on" cell`).toEqual([...p.dependsOn].sort());
    }
  });
});
