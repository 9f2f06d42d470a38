// The dashboard in a real browser (Debian's chromium, driven by playwright-core), run by
// DashboardBrowserIT against an app and worker it started. Every wait is for a condition, with a
// generous bound. Exits non-zero on the first failed step.
//
// Environment: DRIPLINE_URL (the app), DRIPLINE_OPERATOR_TOKEN, DRIPLINE_VIEWER_TOKEN,
// DRIPLINE_CHROMIUM (default /usr/bin/chromium), UI_TEST_TAG (fault tags: <tag>-slow for the run
// that is paused, resumed and stopped; <tag>-fail, whose batch holding key 15 fails),
// UI_TEST_TARGET (a target whose planning fails), UI_TEST_SCREENSHOTS (a directory: a PNG of each
// page is written there when set).
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const base = process.env.DRIPLINE_URL;
const operatorToken = process.env.DRIPLINE_OPERATOR_TOKEN || 'dev-operator';
const viewerToken = process.env.DRIPLINE_VIEWER_TOKEN || 'dev-viewer';
const tag = process.env.UI_TEST_TAG;
const target = process.env.UI_TEST_TARGET;
const shots = process.env.UI_TEST_SCREENSHOTS || '';
const LONG = 180_000;

if (!base || !tag || !target) {
  console.error('DRIPLINE_URL, UI_TEST_TAG and UI_TEST_TARGET are required');
  process.exit(2);
}

function step(name) {
  console.log(`[ui-test ${new Date().toISOString().substring(11, 19)}] ${name}`);
}

function check(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

async function shot(page, name) {
  if (shots) {
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  }
}

async function signIn(page, token, who) {
  await page.goto(`${base}/ui/runs`);
  await page.waitForURL(/\/ui\/login/);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForSelector(`text=Signed in as ${who}`, { timeout: LONG });
}

async function signOut(page) {
  await page.click('form.signout button');
  await page.waitForURL(/\/ui\/login/);
}

/** Fills the new-run form of example.sleep, previews it and checks the plan; returns the page. */
async function previewRun(page, options) {
  await page.goto(`${base}/ui/runs/new`);
  await Promise.all([
    page.waitForURL(/backfill=example\.sleep/),
    page.selectOption('#backfill-choice', 'example.sleep'),
  ]);
  for (const [name, value] of Object.entries(options)) {
    await page.fill(`[name="${name}"]`, String(value));
  }
  await page.click('button[value=preview]');
  await page.waitForSelector('#preview', { timeout: LONG });
}

async function startPreviewed(page) {
  await Promise.all([page.waitForURL(/\/ui\/runs\/\d+\?notice=started/, { timeout: LONG }), page.click('#start')]);
  return Number(new URL(page.url()).pathname.split('/').pop());
}

/** Waits until the run page's live part shows status {@code status} (the page refreshes itself). */
async function awaitStatus(page, status) {
  await page.waitForFunction(
    (wanted) => document.getElementById('run-status')?.textContent.trim() === wanted,
    status,
    { timeout: LONG, polling: 250 },
  );
}

async function control(page, name) {
  await Promise.all([page.waitForURL(new RegExp(`notice=${name}`), { timeout: LONG }), page.click(`button[name=${name}]`)]);
}

const profile = mkdtempSync(join(tmpdir(), 'dripline-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.DRIPLINE_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
  viewport: { width: 1280, height: 900 },
});
let failed = false;
try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(LONG);
  page.on('dialog', (dialog) => dialog.accept());
  page.on('pageerror', (error) => console.error(`[ui-test] page error: ${error.message}`));

  step('the sign-in page, and a wrong token refused');
  await page.goto(`${base}/ui/runs`);
  await page.waitForURL(/\/ui\/login/);
  await shot(page, 'login');
  await page.fill('#token', 'not-a-token');
  await page.click('button[type=submit]');
  await page.waitForSelector('.error:has-text("neither the operator")');

  step('a viewer reads and sees no control');
  await signIn(page, viewerToken, 'viewer');
  check((await page.locator('a[href="/ui/runs/new"]').count()) === 0, 'the viewer sees the New run link');
  await page.goto(`${base}/ui/runs/new`);
  check((await page.locator('#run-form').count()) === 0, 'the viewer sees the new-run form');
  await signOut(page);

  step('an operator previews a run (dry run) and starts it');
  await signIn(page, operatorToken, 'operator');
  await previewRun(page, {
    'options.items': 6000, 'options.sleepMs': 200, 'options.faultTag': `${tag}-slow`,
    batchSize: 10, maxParallelBatches: 2,
  });
  const plan = await page.textContent('#preview');
  check(plan.includes('6,000 keys in 600 batches'), `the dry run shows the plan: ${plan}`);
  await shot(page, 'new-run');
  const slow = await startPreviewed(page);
  step(`run ${slow} started; watching it progress`);
  await awaitStatus(page, 'running');
  await page.waitForFunction(
    () => parseInt(document.getElementById('run-percent')?.textContent || '0', 10) >= 1,
    null,
    { timeout: LONG, polling: 250 },
  );
  check((await page.locator('#temporal-link').getAttribute('href')).includes(`/workflows/dripline-run-${slow}`), 'the Temporal link names the run');
  await page.waitForSelector('#chart svg', { timeout: LONG });
  await shot(page, 'run');

  step('pause, resume and stop it');
  await control(page, 'pause');
  await awaitStatus(page, 'paused');
  await control(page, 'resume');
  await awaitStatus(page, 'running');

  step('the run page lists those actions in its audit trail, newest first');
  await page.waitForFunction(
    () => {
      const rows = [...document.querySelectorAll('#audit tr[data-action]')].map(
        (row) => `${row.dataset.action}:${row.dataset.outcome}`,
      );
      return rows[0] === 'run.resume:accepted' && rows[1] === 'run.pause:accepted' && rows.includes('run.create:accepted');
    },
    null,
    { timeout: LONG },
  );
  check(
    (await page.locator('#audit tr[data-action="run.pause"]').first().textContent()).includes('operator'),
    'the audit trail names the operator as who paused',
  );

  step('the brake holds it, and the run page says so');
  const runUrl = `${base}/ui/runs/${slow}`;
  await page.goto(`${base}/ui/throttle`);
  await page.fill('[name=reason]', 'ui test');
  await Promise.all([page.waitForURL(/notice=held/), page.click('button[name=hold]')]);
  await page.waitForSelector('#brake:has-text("by operator: ui test")');
  await page.goto(runUrl);
  await page.waitForSelector('#throttle li:has-text("brake")', { timeout: LONG });
  await page.goto(`${base}/ui/throttle`);
  await Promise.all([page.waitForURL(/notice=released/), page.click('button[name=release]')]);
  await page.goto(runUrl);
  await page.waitForSelector('#throttle:has-text("Nothing holds this run.")', { timeout: LONG });
  await control(page, 'stop');
  await awaitStatus(page, 'stopped');

  step('a control the API refuses shows the API\'s detail');
  check((await page.locator('button[name=pause]').count()) === 0, 'a stopped run offers no pause');
  // A pause sent anyway (a page left open) is refused as the API refuses it: 409, its detail.
  await Promise.all([
    page.waitForNavigation(),
    page.evaluate(() => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = `${window.location.pathname}/pause`;
      const token = document.createElement('input');
      token.type = 'hidden';
      token.name = '_csrf';
      token.value = document.querySelector('input[name=_csrf]').value;
      form.appendChild(token);
      document.body.appendChild(form);
      form.submit();
    }),
  ]);
  await page.waitForSelector(`#action-error:has-text("run ${slow} is stopped; only a pending or running run can be paused")`);
  // The refusal page is rendered before its entry is recorded: the run's page lists it.
  await page.goto(runUrl);
  await page.waitForSelector('#audit tr[data-action="run.pause"][data-outcome="rejected"]', { timeout: LONG });

  step('a field the API refuses is shown beside it, and nothing is started');
  await page.goto(`${base}/ui/runs/new?backfill=example.sleep`);
  await page.fill('[name="options.items"]', '-5');
  await page.fill('[name="niceRatio"]', '200');
  await page.click('button[value=preview]');
  await page.waitForSelector('.field-error[data-field="options.items"]');
  await page.waitForSelector('.field-error[data-field="niceRatio"]:has-text("must be between 0 and 100")');
  check((await page.locator('#start').count()) === 0, 'a refused form offers no start');

  step('a run whose batch fails shows the error');
  await previewRun(page, { 'options.items': 30, 'options.faultTag': `${tag}-fail`, batchSize: 10 });
  const failing = await startPreviewed(page);
  await page.waitForSelector('#failed pre.batch-error:has-text("injected batch fault in [11, 20]")', { timeout: LONG });
  step(`run ${failing}'s failed batch shows its error`);
  await shot(page, 'run-failed');

  step('the runs list shows both runs');
  await page.goto(`${base}/ui/runs?backfill=example.sleep`);
  await page.waitForSelector(`tr[data-run="${slow}"][data-status="stopped"]`);
  await page.waitForSelector(`tr[data-run="${failing}"]`);
  await shot(page, 'runs');

  step('a failing target is listed first');
  await page.goto(`${base}/ui/targets`);
  await page.waitForSelector(`tr[data-target="${target}"][data-failing="true"]`, { timeout: LONG });
  await shot(page, 'targets');

  step('an operator replans the failing target after a preview of what it does');
  await page.click(`tr[data-target="${target}"] button[value=preview]`);
  await page.waitForSelector(`#replan-preview[data-target="${target}"]`);
  await Promise.all([page.waitForURL(/notice=replanned/, { timeout: LONG }), page.click('#replan-confirm')]);
  await page.waitForSelector(`tr[data-target="${target}"]`);

  step('the throttle and pools');
  await page.goto(`${base}/ui/throttle`);
  await page.waitForSelector('#brake');
  await shot(page, 'throttle');
  step('done');
} catch (e) {
  failed = true;
  console.error(`[ui-test] FAILED: ${e.stack || e}`);
  try {
    const page = context.pages()[0];
    if (page) {
      console.error(`[ui-test] at ${page.url()}:\n${(await page.content()).substring(0, 4000)}`);
    }
  } catch (ignored) {
    // The page is gone; the failure above says enough.
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
