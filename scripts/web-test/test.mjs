// test.mjs drives headless Chromium over nanovox's web page. It is run by
// internal/server/web_test.go as
//
//	node test.mjs URL
//
// with environment CHROMIUM (the browser binary), NANOVOX_KEY (the server's
// API key), NANOVOX_VOICE (a saved voice), NANOVOX_SECONDS (the audio each
// request yields at speed 1), NANOVOX_CLIP (a reference clip) and
// NANOVOX_OUT (a folder for the screenshot).
// It exits non-zero on the first failed check and prints one line per check.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const url = process.argv[2];
const env = k => { const v = process.env[k]; if (!v) { console.error(`missing env ${k}`); process.exit(2); } return v; };
const chromiumPath = env('CHROMIUM');
const key = env('NANOVOX_KEY');
const voice = env('NANOVOX_VOICE');
const seconds = Number(env('NANOVOX_SECONDS'));
const outDir = env('NANOVOX_OUT');
if (!url) { console.error('usage: node test.mjs URL'); process.exit(2); }

let checks = 0;
function check(ok, what, detail) {
  if (!ok) throw new Error(`FAIL ${what}${detail === undefined ? '' : ': ' + JSON.stringify(detail)}`);
  checks++;
  console.log(`ok ${what}${detail === undefined ? '' : ' ' + JSON.stringify(detail)}`);
}
const near = (got, want, tol) => Math.abs(got - want) <= tol;

const profile = mkdtempSync(join(tmpdir(), 'nanovox-chromium-'));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--autoplay-policy=no-user-gesture-required'],
});
const origin = new URL(url).origin;
const foreign = [];
const pageErrors = [];
let exit = 0;
try {
  const page = browser.pages()[0] || await browser.newPage();
  page.setDefaultTimeout(10000);
  // Everything the page loads must come from the server itself (or be a
  // blob: made by the page): it has to work offline.
  page.on('request', r => { const u = r.url(); if (!u.startsWith(origin + '/') && !u.startsWith('blob:') && !u.startsWith('data:')) foreign.push(u); });
  page.on('pageerror', e => pageErrors.push(String(e)));
  page.on('console', m => { if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) pageErrors.push(m.text()); });

  const nv = () => page.evaluate(() => JSON.parse(JSON.stringify(window.__nanovox)));
  const lastRun = () => page.evaluate(() => { const r = window.__nanovox.runs; return r.length ? JSON.parse(JSON.stringify(r[r.length - 1])) : null; });
  const statusText = () => page.locator('#status').textContent();
  // speak clicks Speak and waits for the new run to finish generating
  // (done, stopped, empty or error).
  async function speak() {
    const before = (await nv()).runs.length;
    await page.click('#go');
    await page.waitForFunction(n => { const r = window.__nanovox.runs; return r.length > n && ['done', 'stopped', 'empty', 'error'].includes(r[r.length - 1].status); }, before, {timeout: 15000});
    return lastRun();
  }

  await page.goto(url);

  // Every control has a label a screen reader can announce.
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea, button')]
    .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby') && !(e.tagName === 'BUTTON' && e.textContent.trim()))
    .map(e => e.id || e.outerHTML));
  check(unlabelled.length === 0, 'every control is labelled', unlabelled);

  // No key: listing fails with a message that says a key is needed.
  await page.waitForFunction(() => window.__nanovox.voiceError !== '');
  check(/needs an API key/.test(await page.locator('#voicemsg').textContent()), 'no key: voice list says a key is needed', await page.locator('#voicemsg').textContent());

  // A wrong key: "wrong API key", and the list stays empty.
  await page.fill('#key', 'not-the-key');
  await page.waitForFunction(() => /Wrong API key/.test(document.getElementById('voicemsg').textContent));
  const wrong = await nv();
  check(wrong.voices.length === 0 && /Wrong API key/.test(wrong.voiceError), 'wrong key: voice list error', wrong.voiceError);

  // The right key: the saved voice appears without a reload.
  await page.fill('#key', key);
  await page.waitForFunction(v => window.__nanovox.voices.includes(v), voice);
  check((await nv()).voiceError === '', 'right key: voice list loaded', (await nv()).voices);
  await page.selectOption('#saved', voice);

  // Buffered formats: fetched whole, decoded by decodeAudioData.
  await page.uncheck('#stream');
  for (const format of ['mp3', 'wav', 'flac', 'opus']) {
    await page.selectOption('#format', format);
    const run = await speak();
    check(run.status === 'done' && run.format === format && !run.stream && run.bytes > 0, `${format}: request done`, {status: run.status, bytes: run.bytes, error: run.error});
    // mp3 and opus carry encoder padding; the decoded length may differ by a frame or two.
    check(near(run.duration, seconds, 0.1), `${format}: decoded duration ≈ ${seconds} s`, run.duration);
    const a = page.locator('#download');
    check(await a.isVisible() && (await a.getAttribute('download')).endsWith('.' + format) && (await a.getAttribute('href')).startsWith('blob:'), `${format}: download link`, await a.getAttribute('download'));
  }

  // aac: decodable only where the browser has the codec; report, do not assert.
  await page.selectOption('#format', 'aac');
  {
    const run = await speak();
    console.log(`info aac: status ${run.status}, ${run.bytes} bytes, ${run.duration.toFixed(3)} s${run.error ? ', ' + run.error : ''}`);
    check(run.bytes > 0 && (run.status === 'done' || /could not decode/.test(await statusText())), 'aac: decoded, or a clear decode error with the bytes offered', run.status);
  }

  // Speed 2 halves the audio.
  await page.selectOption('#format', 'wav');
  await page.fill('#speedNum', '2');
  {
    const run = await speak();
    check(run.status === 'done' && near(run.duration, seconds / 2, 0.05), 'wav at speed 2: half the duration', run.duration);
  }
  await page.fill('#speedNum', '1');

  // A sample rate: the server resamples and the page decodes what it says.
  await page.fill('#rate', '16000');
  {
    const run = await speak();
    check(run.status === 'done' && run.sampleRate === 16000 && near(run.duration, seconds, 0.01), 'wav at 16000 Hz', {rate: run.sampleRate, duration: run.duration});
  }
  // A rate the server refuses: its error.message is shown.
  await page.fill('#rate', '7000');
  {
    const run = await speak();
    const s = await statusText();
    check(run.status === 'error' && /sample_rate must be in \[8000, 48000\]/.test(s), 'bad sample rate: server message shown', s);
  }
  await page.fill('#rate', '');

  // Streamed raw PCM: chunks scheduled as they arrive, back to back.
  await page.selectOption('#format', 'pcm');
  await page.check('#stream');
  {
    const run = await speak();
    check(run.status === 'done' && run.stream && run.chunks >= 2, 'streamed pcm: done in several chunks', {status: run.status, chunks: run.chunks, error: run.error});
    check(near(run.duration, seconds, 1e-6) && run.bytes === Math.round(seconds * run.sampleRate) * 2, `streamed pcm: scheduled ${seconds} s`, {duration: run.duration, bytes: run.bytes, rate: run.sampleRate});
    check((await page.locator('#download').getAttribute('download')).endsWith('.wav'), 'streamed pcm: download as wav');
    console.log(`info streamed pcm: ${run.chunks} chunks, ${run.gaps} arrived late, first audio after ${run.firstAudio.toFixed(3)} s`);
  }

  // Streamed pcm at another rate: the page reads X-Audio-Sample-Rate.
  await page.fill('#rate', '16000');
  {
    const run = await speak();
    check(run.status === 'done' && run.sampleRate === 16000 && run.bytes === seconds * 16000 * 2 && near(run.duration, seconds, 1e-6), 'streamed pcm at 16000 Hz', {rate: run.sampleRate, bytes: run.bytes, duration: run.duration});
  }
  await page.fill('#rate', '');

  // Buffered pcm: raw samples turned into an AudioBuffer by the page.
  await page.uncheck('#stream');
  {
    const run = await speak();
    check(run.status === 'done' && !run.stream && near(run.duration, seconds, 1e-6) && (await page.locator('#download').getAttribute('download')).endsWith('.pcm'), 'buffered pcm', {status: run.status, duration: run.duration});
  }
  await page.check('#stream');

  // The AudioContext: one, running (headless Chromium plays into a null sink).
  const ctxState = (await nv()).ctxState;
  console.log(`info AudioContext state: ${ctxState}`);
  check((await nv()).contexts === 1, 'one AudioContext for every request', (await nv()).contexts);

  // Stop: halts playback and the request; the next Speak works. The text is
  // long (many text chunks) so that the request is most likely still
  // generating when the first chunk plays; whether it was is reported, and
  // the Go test then checks that the server saw the request cancelled.
  {
    const one = await page.inputValue('#text');
    await page.fill('#text', 'This sentence is only here to make the request long enough to stop it while it still runs. '.repeat(30));
    const before = (await nv()).runs.length;
    await page.click('#go');
    await page.waitForFunction(n => { const s = window.__nanovox; return s.runs.length > n && (s.active > 0 || s.runs[s.runs.length - 1].status !== 'requesting'); }, before);
    const mid = await nv();
    await page.click('#stop');
    const after = await nv();
    const run = after.runs[after.runs.length - 1];
    console.log(`info stop: clicked with ${mid.active} sources scheduled, request ${mid.busy ? 'in flight' : 'finished'}`);
    check(after.active === 0 && !after.busy && run.status === 'stopped', 'stop: nothing scheduled, run stopped', {active: after.active, status: run.status});
    if (mid.busy) {
      check(run.aborted && /generation cancelled/.test(await statusText()), 'stop: request aborted', run.aborted);
      console.log('STOPPED_IN_FLIGHT'); // the Go test looks for the server's side of it
    }
    await page.fill('#text', one);
    check(await page.locator('#stop').isDisabled() && await page.locator('#go').isEnabled(), 'stop: buttons reset');
    const again = await speak();
    check(again.status === 'done' && near(again.duration, seconds, 1e-6), 'play after stop works', {status: again.status, duration: again.duration});
  }

  // A response with no audio, and one the browser cannot decode (the
  // server never sends either; the test fakes them).
  await page.selectOption('#format', 'mp3');
  await page.route('**/v1/audio/speech', route => route.fulfill({status: 200, contentType: 'audio/mpeg', body: ''}));
  {
    const run = await speak();
    const s = await statusText();
    check(run.status === 'empty' && /produced no audio \(the server sent 0 bytes\)/.test(s), 'empty response: message', s);
  }
  await page.unroute('**/v1/audio/speech');
  await page.route('**/v1/audio/speech', route => route.fulfill({status: 200, contentType: 'audio/mpeg', body: 'this is not an mp3 file at all'}));
  {
    const run = await speak();
    const s = await statusText();
    check(run.status === 'error' && /could not decode the mp3 audio \(30 bytes/.test(s) && await page.locator('#download').isVisible(), 'undecodable response: message and download', s);
  }
  await page.unroute('**/v1/audio/speech');

  // Empty input: a message, no request.
  await page.fill('#text', '   ');
  {
    const n = (await nv()).runs.length;
    await page.click('#go');
    const s = await statusText();
    check((await nv()).runs.length === n && /Type some text/.test(s), 'empty input: message, no request', s);
  }
  await page.fill('#text', 'Hello from the browser test.');

  // A wrong key on speech: the 401 says so, with the server's message.
  await page.fill('#key', 'wrong');
  await page.waitForFunction(() => /Wrong API key/.test(document.getElementById('voicemsg').textContent));
  {
    // The voice list was emptied; speak with an inline clip instead.
    await page.setInputFiles('#clip', env('NANOVOX_CLIP'));
    const run = await speak();
    const s = await statusText();
    check(run.status === 'error' && /Wrong API key \(server: invalid API key\)/.test(s), 'wrong key: speech error shown', s);
  }
  await page.fill('#key', key);
  await page.waitForFunction(v => window.__nanovox.voices.includes(v), voice);

  // Saving the clip as a voice from the page: it joins the list, selected.
  await page.fill('#savename', 'fromthepage');
  await page.click('#save');
  await page.waitForFunction(() => /Saved voice "fromthepage"/.test(document.getElementById('voicemsg').textContent));
  check((await nv()).voices.includes('fromthepage') && await page.inputValue('#saved') === 'fromthepage', 'voice saved from the page', (await nv()).voices);
  {
    const run = await speak();
    check(run.status === 'done' && run.format === 'mp3', 'speak with the voice saved from the page', run.status);
  }

  const shot = join(outDir, 'nanovox-web.png');
  await page.screenshot({path: shot, fullPage: true});
  console.log(`info screenshot ${shot}`);

  check(foreign.length === 0, 'no request left the server', foreign);
  check(pageErrors.length === 0, 'no page errors', pageErrors);
  console.log(`${checks} passed, 0 failed`);
} catch (e) {
  console.error(e.stack || String(e));
  if (pageErrors.length) console.error('page errors: ' + pageErrors.join('\n'));
  exit = 1;
} finally {
  await browser.close();
  rmSync(profile, {recursive: true, force: true});
}
process.exit(exit);
