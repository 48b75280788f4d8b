#!/usr/bin/env bash
# Starts the real nanovox binary on loopback with the tiny fixture model and
# talks to it with clients nobody here wrote: the official openai npm package
# and curl -N. Then stops it with SIGTERM and checks it drains and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/nanovox" ./cmd/nanovox
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 18731)
key=test-key-$$
"$work/nanovox" serve --model testdata/tiny-a/lm --codec testdata/tiny-a/codec \
	--addr 127.0.0.1:$port --api-key "$key" --data-dir "$work/data" --log-format json \
	--voice-alias alloy=sdk-voice --public-lists 2>"$work/serve.log" &
pid=$!
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
	sleep 0.1
done
url=http://127.0.0.1:$port

echo "== openai npm client"
(cd scripts/openai-client && npm ci --no-audit --no-fund --silent && \
	NANOVOX_URL=$url NANOVOX_API_KEY=$key REF_WAV=../../testdata/tiny-a/ref.wav node test.mjs)

echo "== curl -N (chunked raw PCM stream)"
printf '{"input": "Hello world. This is a tiny test.", "voice": "sdk-voice", "stream": true, "seed": 5, "response_format": "pcm"}' >"$work/req.json"
curl -sSN -D "$work/headers" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
	--data @"$work/req.json" "$url/v1/audio/speech" -o "$work/stream.pcm"
grep -qi '^transfer-encoding: chunked' "$work/headers"
grep -qi '^content-type: audio/pcm' "$work/headers"
grep -qi '^x-audio-sample-rate: 48000' "$work/headers"
bytes=$(stat -c %s "$work/stream.pcm")
[ "$bytes" -gt 0 ] && [ $((bytes % 7680)) -eq 0 ]
echo "curl: $bytes bytes of 48 kHz mono s16le in whole 80 ms frames"

echo "== LibreChat: two MP3 bodies concatenated decode as one stream"
for i in 1 2; do
	curl -sSf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
		--data '{"model":"tts-1","input":"Hello world. This is a tiny test.","voice":"alloy","backend":"openai","user":"u1","seed":'$i'}' \
		"$url/v1/audio/speech" -o "$work/part$i.mp3"
done
cat "$work/part1.mp3" "$work/part2.mp3" >"$work/both.mp3"
seconds() { ffmpeg -v error -xerror -i "$1" -f s16le -ac 1 -ar 48000 - | wc -c | awk '{print $1/96000}'; }
d1=$(seconds "$work/part1.mp3")
d2=$(seconds "$work/part2.mp3")
db=$(seconds "$work/both.mp3")
awk -v a="$d1" -v b="$d2" -v c="$db" 'BEGIN { d = c - a - b; if (d < -0.05 || d > 0.05) { print "concatenation decodes as " c " s, parts " a " + " b; exit 1 } }'
echo "concatenated: $d1 s + $d2 s decode as $db s"

echo "== Open WebUI: the voice and model lists without the API key (--public-lists)"
voices=$(curl -sSf "$url/v1/audio/voices")
echo "$voices" | grep -q '"voices":\[{"id":"sdk-voice"'
models=$(curl -sSf "$url/v1/audio/models")
echo "$models" | grep -q '"models":\[.*"id":"tts-1"'
echo "voices: $voices"
echo "models: $models"

echo "== SIGTERM drains and exits 0"
kill -TERM $pid
wait $pid
grep -q '"msg":"stopped"' "$work/serve.log"
echo "openai-client-test: ok"
