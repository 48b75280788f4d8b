// Runs the official openai npm client against a running nanovox server.
// Usage: NANOVOX_URL=http://127.0.0.1:PORT NANOVOX_API_KEY=KEY REF_WAV=path node test.mjs
import fs from 'node:fs';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';

// The duration of an encoded body as ffmpeg decodes it, in seconds (throws
// if ffmpeg finds an error).
function probe(bytes, fmt) {
  const pcm = execFileSync('ffmpeg', ['-v', 'error', '-xerror', '-f', fmt, '-i', 'pipe:0', '-f', 's16le', '-ac', '1', '-ar', '48000', 'pipe:1'], { input: bytes, maxBuffer: 1 << 28 });
  return pcm.length / 2 / 48000;
}

const base = process.env.NANOVOX_URL;
const key = process.env.NANOVOX_API_KEY;
const clip = fs.readFileSync(process.env.REF_WAV);
const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
const input = 'Hello world. This is a tiny test. The quick brown fox jumps over the lazy dog, twice.';

// Save a voice (multipart, like any HTTP client would).
const form = new FormData();
form.append('name', 'sdk-voice');
form.append('file', new Blob([clip], { type: 'audio/wav' }), 'ref.wav');
form.append('replace', 'true');
const saved = await fetch(`${base}/v1/audio/voices`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${key}` } });
assert.equal(saved.status, 201, await saved.text());

// Models.
const models = await client.models.list();
assert.ok(models.data.some((m) => m.id === 'tts-1'));

// The SDK's defaults: no response_format, so MP3 (OpenAI's default), and an
// OpenAI voice name that the server maps to a saved voice (--voice-alias).
// (seed, a nanovox extension, only makes the tiny test model's random
// weights give the same length every run.)
const mp3 = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, seed: 5 });
assert.equal(mp3.headers.get('content-type'), 'audio/mpeg');
const mp3Bytes = Buffer.from(await mp3.arrayBuffer());
const mp3Seconds = probe(mp3Bytes, 'mp3');
assert.ok(mp3Seconds > 0, `mp3 of ${mp3Seconds} s`);
console.log(`default: ${mp3Bytes.length} bytes of MP3, ${mp3Seconds} s`);

// Buffered WAV with a saved voice, the way OpenAI clients call it.
const wav = await client.audio.speech.create({ model: 'tts-1', voice: 'sdk-voice', input, response_format: 'wav', seed: 5 });
assert.equal(wav.headers.get('content-type'), 'audio/wav');
const wavBytes = Buffer.from(await wav.arrayBuffer());
assert.equal(wavBytes.toString('ascii', 0, 4), 'RIFF');
assert.equal(wavBytes.readUInt32LE(24), 48000);
console.log(`buffered: ${wavBytes.length} bytes of WAV`);

// Streamed raw PCM (stream: true is a nanovox extension the SDK passes through).
const pcm = await client.audio.speech.create({ model: 'tts-1', voice: 'sdk-voice', input, response_format: 'pcm', seed: 5, stream: true });
assert.equal(pcm.headers.get('content-type'), 'audio/pcm');
let streamed = Buffer.alloc(0);
let chunks = 0;
for await (const c of pcm.body) { streamed = Buffer.concat([streamed, Buffer.from(c)]); chunks++; }
assert.deepEqual(streamed, wavBytes.subarray(44), 'streamed PCM equals the buffered WAV data');
console.log(`streamed: ${streamed.length} bytes in ${chunks} network chunks`);

// SSE events with an inline reference clip.
const sse = await client.audio.speech.create({ model: 'tts-1', voice: { ref_audio: clip.toString('base64') }, input, stream_format: 'sse', response_format: 'pcm', seed: 5 });
assert.equal(sse.headers.get('content-type'), 'text/event-stream');
let text = '';
for await (const c of sse.body) text += Buffer.from(c).toString();
const events = text.trim().split('\n\n').map((e) => JSON.parse(e.replace(/^data: /, '')));
const audio = Buffer.concat(events.filter((e) => e.type === 'speech.audio.delta').map((e) => Buffer.from(e.audio, 'base64')));
const done = events.at(-1);
assert.equal(done.type, 'speech.audio.done');
assert.ok(done.usage.output_tokens > 0);
assert.deepEqual(audio, streamed, 'SSE audio equals the streamed PCM');
console.log(`sse: ${events.length - 1} delta events, usage ${JSON.stringify(done.usage)}`);

// Errors come back as the SDK's typed errors.
await assert.rejects(client.audio.speech.create({ model: 'tts-1', voice: 'nova', input }), (e) => e.status === 404 && /--voice-alias nova=NAME/.test(e.message));
await assert.rejects(client.audio.speech.create({ model: 'tts-1', voice: 'no-such-voice', input }), (e) => e.status === 404 && /not a saved voice/.test(e.message));
await assert.rejects(client.audio.speech.create({ model: 'tts-1', voice: 'sdk-voice', input, speed: 5 }), (e) => e.status === 400 && e.param === 'speed');
// The lists are public here (--public-lists, for Open WebUI); speech is not.
await assert.rejects(new OpenAI({ apiKey: 'wrong', baseURL: `${base}/v1`, maxRetries: 0 }).audio.speech.create({ model: 'tts-1', voice: 'alloy', input }), (e) => e.status === 401);
console.log('openai client: ok');
