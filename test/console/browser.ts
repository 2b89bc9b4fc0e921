// Real Chromium for the console tests: Debian's `chromium` package driven by playwright-core, with
// a fresh profile, no sandbox (containers), and every background network feature off, so the only
// traffic is to the console on loopback. Absent browser: the tests that need it skip with a notice.
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"

export const chromiumPresent = (): boolean => {
  if (existsSync(CHROMIUM)) return true
  console.warn(`[notice] ${CHROMIUM} is absent (apt-get install chromium): the console's browser tests are skipped`)
  return false
}

export const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"
]

/** A browser context on a fresh user-data-dir; `close` removes the profile. */
export const launch = async (viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; close: () => Promise<void> }> => {
  const profile = mkdtempSync(join(tmpdir(), "mandate-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
    timeout: 120_000
  })
  return {
    context,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  }
}
