// Launches Debian's Chromium (/usr/bin/chromium) through playwright-core for the browser tests: nothing is downloaded,
// and Chromium's own background traffic (updates, sync, QUIC) is off so every request a test sees comes from the page.
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
