// Package weights reads model checkpoints: it finds the tensor files of a
// checkpoint directory, parses them without executing anything from them, and
// hands out tensors checked against the shapes the model's config implies.
//
// # Directory layouts
//
// [Open] accepts every layout the published checkpoints use — a single
// model.safetensors, a sharded set listed by model.safetensors.index.json,
// any *.safetensors files, or a PyTorch pytorch_model.bin (optionally sharded
// by pytorch_model.bin.index.json) — and returns a [Store] whose getters
// ([Store.F32], [Store.Mat]) check shape and dtype and record which tensors
// were used, so a loader can report the ones it ignored ([Store.Unused]).
//
// Both readers below hand out the same descriptor, [Tensor]: a name, an
// element type ([DType], spelled as in a safetensors header), a shape and the
// raw little-endian bytes, with conversions to float32 and bfloat16.
//
// # Safetensors
//
// [OpenSafetensors] reads the safetensors format: an 8-byte little-endian
// header length, a JSON header that maps tensor names to dtype, shape and byte
// offsets, then the raw tensor data. Files are memory-mapped where the
// platform allows it, so opening a checkpoint costs no copies; callers convert
// or pack what they need and then Close the file. Every offset and size in the
// header is checked against the file before any tensor is exposed, so a lying
// header is an error, never a crash or an out-of-bounds read.
// [WriteSafetensorsFile] writes the same format (the test models and
// fixtures are made with it).
//
// # PyTorch checkpoints
//
// [LoadTorch] reads checkpoints written by torch.save in the zip format of
// torch ≥ 1.6 (for example a Hugging Face pytorch_model.bin). Such a file is a
// zip archive with one top directory <root> holding
//
//	<root>/data.pkl     the pickled object: a state dict of name → tensor
//	<root>/data/<key>   one raw record per tensor storage
//	<root>/byteorder    "little" or "big" (absent in files from torch < 2.0: little)
//	<root>/version, <root>/.data/..., ...   ignored
//
// data.pkl is interpreted by a restricted unpickler written here: it
// implements the data opcodes of pickle protocols 2–5 and accepts only an
// allow-list of globals — OrderedDict, torch's tensor and parameter rebuild
// functions, storage classes and dtypes. Any other global (os.system,
// builtins.eval, ...) or opcode is an error naming it; nothing named in the
// file is ever imported or called. Tensors are then copied out of their
// storages as contiguous little-endian bytes, so storage offsets, transposed
// views and tensors that share one storage (tied weights) each come out with
// their own, correct data.
//
// Loading is linear in the file size and holds at most the output tensors
// plus one storage. Every size in the archive and the pickle is checked before
// it is used to allocate or read, so a hostile file fails with an error rather
// than a crash, a hang or an out-of-memory: in particular the tensors may not
// expand to more than four times the file size (plus 16 MiB), which bounds
// broadcast (stride 0) and overlapping views.
package weights
