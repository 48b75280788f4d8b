// Package lm is the MOSS-TTS-Nano language model in pure Go: a global GPT-2
// transformer over rows of one text token and the audio codes of one frame,
// and a local transformer that predicts a frame's 16 codes one after
// another, with the prompt layout, sampling and stopping rules of the
// OpenMOSS remote code (modeling_moss_tts_nano.py). The forward pass reads
// top to bottom in forward.go; generate.go steps one generation or a batch
// of them; prompt.go builds the voice-clone prompt and its cached prefix.
//
// Greedy generation is token-exact with the float32 reference; Options.Matmul
// selects the faster, less exact arithmetic of the bf16 and int8 modes.
package lm
