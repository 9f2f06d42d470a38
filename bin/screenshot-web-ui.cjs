// Helper of bin/screenshot-web-ui (run it through that script, not directly): drives the system's
// Chromium with playwright-core (never a downloaded browser) and screenshots one run's pages in
// the Temporal Web UI. The Web UI keeps polling a running workflow, so Chromium's own
// --screenshot/--virtual-time-budget never finishes on one; here we wait for the text we want.
//
//   node bin/screenshot-web-ui.cjs UI_URL WORKFLOW_ID RUN_ID SUMMARY OUT_METADATA OUT_SECOND
//
// Environment: PLAYWRIGHT_CORE_DIR (where playwright-core is installed), CHROMIUM (binary),
// SCREENSHOT_WIDTH / SCREENSHOT_HEIGHT (viewport, default 1440x720), SECOND_TAB (timeline, the
// default, pending-activities or query), SECOND_HEIGHT (viewport height for it, default 1100).
'use strict';

const path = require('path');
const { createRequire } = require('module');

const [ui, workflowId, runId, summary, outMetadata, outSecond] = process.argv.slice(2);
if (!outSecond) {
  console.error('usage: screenshot-web-ui.cjs UI_URL WORKFLOW_ID RUN_ID SUMMARY OUT_METADATA OUT_SECOND');
  process.exit(2);
}
const requireFrom = createRequire(
  path.resolve(process.env.PLAYWRIGHT_CORE_DIR || process.cwd(), 'package.json'),
);
const { chromium } = requireFrom('playwright-core');

const width = Number(process.env.SCREENSHOT_WIDTH || 1440);
const height = Number(process.env.SCREENSHOT_HEIGHT || 720);
const secondTab = process.env.SECOND_TAB || 'timeline';
const secondHeight = Number(process.env.SECOND_HEIGHT || 1100);
const base = `${ui}/namespaces/default/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}`;

function say(message) {
  console.error(`[screenshot-web-ui.cjs] ${message}`);
}

async function open(page, tab) {
  say(`opening ${base}/${tab}`);
  await page.goto(`${base}/${tab}`, { waitUntil: 'domcontentloaded', timeout: 30000 });
  await page.getByText(workflowId, { exact: true }).first().waitFor({ timeout: 30000 });
}

/** Waits until some frame of the page (the UI renders Markdown in iframes) shows matching text. */
async function waitForFrameText(page, matches, what) {
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const text = await frame
        .evaluate(() => (document.body ? document.body.innerText : ''))
        .catch(() => '');
      if (matches(text)) {
        return text.trim();
      }
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`the page did not show ${what} within 30s`);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width, height } });

    // 1. User Metadata: static summary and details (set at start) and current details (the
    //    workflow's progress in words, read through the __temporal_workflow_metadata query).
    await open(page, 'user-metadata');
    await page.getByText('Current Details').first().waitFor({ timeout: 30000 });
    // The Web UI renders summary, details and current details as Markdown in iframes.
    await waitForFrameText(page, (text) => text.includes(summary), 'the static summary');
    await waitForFrameText(page, (text) => / keys \(\d+%\)/.test(text), 'the current details');
    await page.waitForTimeout(500); // let fonts and layout settle
    await page.screenshot({ path: outMetadata });
    say(`wrote ${outMetadata}`);

    // 2. The batches on the Timeline (each labelled with its activity summary, "batch N [a..b]",
    //    at most the cap at once), the batches in flight (Pending Activities) or the progress
    //    query's answer (Queries).
    await page.setViewportSize({ width, height: secondHeight });
    if (secondTab === 'query') {
      await open(page, 'query');
      await page.getByRole('button', { name: /Run Query|Refresh Query/ }).click({ timeout: 30000 });
      await page.getByText(/processedKeys/).first().waitFor({ timeout: 30000 });
    } else if (secondTab === 'timeline') {
      await open(page, 'timeline');
      await page.getByText(/BatchProcessBatch • batch \d+/).first().waitFor({ timeout: 30000 });
    } else {
      await open(page, 'pending-activities');
      await page.getByText('BatchProcessBatch').first().waitFor({ timeout: 30000 });
    }
    await page.waitForTimeout(500);
    await page.screenshot({ path: outSecond });
    say(`wrote ${outSecond}`);
  } finally {
    await browser.close();
  }
})().catch((error) => {
  console.error(`[screenshot-web-ui.cjs] ${error && error.stack ? error.stack : error}`);
  process.exit(1);
});
