/**
 * Debian's Chromium for the browser tests, through playwright-core (no browser download). Under
 * CI=true a missing binary fails the test file instead of skipping it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.FLEETGW_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM && process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);

/** Starts headless Chromium. Playwright gives every launch a new empty profile; these flags keep it off the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
