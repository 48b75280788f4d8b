#!/usr/bin/python3
"""Differential goldens for internal/spm, made with the real SentencePiece.

Development tool only: the Go tests read the files it writes and never run it.
Needs Debian bookworm's python3-sentencepiece (0.1.97) and python3-protobuf:

    apt-get install python3-sentencepiece python3-protobuf
    cd internal/spm/testdata && /usr/bin/python3 gen_golden.py [--train CORPUS]

--train CORPUS retrains the small extra models (*.model here) on a text file
(we used botchan.txt from the SentencePiece repository's data/ folder, plus a
few generated multilingual lines); without it the committed models are used.

Writes differential.json.gz: per model, encodings (ids and pieces) of
thousands of random and nasty strings (including invalid UTF-8 given as
bytes), decodings of random id sequences, and for the real MOSS-TTS-Nano
model SHA-256 digests of the encodings of every Unicode scalar value alone and
of every key of its precompiled charsmap (alone and between letters).
"""

import base64
import gzip
import hashlib
import json
import os
import random
import struct
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "testdata")

# Models, as paths relative to this directory (the Go test uses the same).
MODELS = {
    "real": "../../../testdata/real/tokenizer.model",
    "tiny-a": "../../../testdata/tiny-a/lm/tokenizer.model",
    "bpe_unk": "bpe_unk.model",
    "bpe_raw": "bpe_raw.model",
    "bpe_suffix": "bpe_suffix.model",
    "unigram": "unigram.model",
    "unigram_fb": "unigram_fb.model",
}

NORM_RULES = """41\t61
61 62 63\t58
61 62\t59
7E\t
3000\t20
9\t20
FF01\t21
2460\t28 31 29
E9\t65 301
2581\t5F
"""

DENORM_RULES = """5F\t2581
58\t61 62 63
"""


def train(corpus):
    rules = os.path.join(HERE, "_norm.tsv")
    denorm = os.path.join(HERE, "_denorm.tsv")
    with open(rules, "w") as f:
        f.write(NORM_RULES)
    with open(denorm, "w") as f:
        f.write(DENORM_RULES)
    common = dict(input=corpus, num_threads=1, input_sentence_size=0, hard_vocab_limit=False,
                  character_coverage=0.99)
    spm.SentencePieceTrainer.train(
        model_prefix=os.path.join(HERE, "bpe_unk"), model_type="bpe", vocab_size=400,
        normalization_rule_tsv=rules, byte_fallback=False,
        user_defined_symbols=["<u>", "<u>x", "<|a|>", "\u2581\u2581", "ab"],
        control_symbols=["<c1>", "<c2>"], **common)
    spm.SentencePieceTrainer.train(
        model_prefix=os.path.join(HERE, "bpe_raw"), model_type="bpe", vocab_size=800,
        normalization_rule_name="identity", denormalization_rule_tsv=denorm,
        add_dummy_prefix=False, remove_extra_whitespaces=False, byte_fallback=True,
        user_defined_symbols=["<sep>"], **common)
    spm.SentencePieceTrainer.train(
        model_prefix=os.path.join(HERE, "bpe_suffix"), model_type="bpe", vocab_size=400,
        normalization_rule_name="identity", treat_whitespace_as_suffix=True,
        unk_surface="<?>", **common)
    spm.SentencePieceTrainer.train(
        model_prefix=os.path.join(HERE, "unigram"), model_type="unigram", vocab_size=600,
        normalization_rule_name="identity", user_defined_symbols=["<u>", "<u>x", "the"],
        **common)
    spm.SentencePieceTrainer.train(
        model_prefix=os.path.join(HERE, "unigram_fb"), model_type="unigram", vocab_size=700,
        normalization_rule_tsv=rules, byte_fallback=True, **common)
    for name in ("_norm.tsv", "_denorm.tsv"):
        os.remove(os.path.join(HERE, name))
    for name in MODELS:
        vocab = os.path.join(HERE, name + ".vocab")
        if os.path.exists(vocab):
            os.remove(vocab)

    # Post-edits that spm_train has no flags for.
    m = load_proto("bpe_raw.model")
    # Mark some merged pieces UNUSED: BPE must split them back (resegment).
    marked = 0
    for p in m.pieces:
        if p.type == pb.ModelProto.SentencePiece.NORMAL and len(p.piece) >= 3 and marked < 40:
            p.type = pb.ModelProto.SentencePiece.UNUSED
            marked += 1
    save_proto(m, "bpe_raw.model")
    m = load_proto("bpe_suffix.model")
    m.normalizer_spec.escape_whitespaces = False
    save_proto(m, "bpe_suffix.model")
    m = load_proto("unigram.model")
    marked = 0
    for p in m.pieces:
        if p.type == pb.ModelProto.SentencePiece.NORMAL and len(p.piece) >= 4 and marked < 20:
            p.type = pb.ModelProto.SentencePiece.UNUSED
            marked += 1
    save_proto(m, "unigram.model")


def load_proto(path):
    m = pb.ModelProto()
    with open(os.path.join(HERE, path), "rb") as f:
        m.ParseFromString(f.read())
    return m


def save_proto(m, path):
    with open(os.path.join(HERE, path), "wb") as f:
        f.write(m.SerializeToString())


# --- test strings -----------------------------------------------------------

NASTY = [
    "", " ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\u2581", "\u2581\u2581", " \u2581 ",
    "a", "A", "abc", "ABC", "ab", "aab", "abab", "Xab~c", "~", "~~~", "a~b", "\u2460\u2460",
    "caf\u00e9", "cafe\u0301", "e\u0301\u0301", "\u0301", "\u0301a", "a\u0300\u0301\u0302",
    "\ufeffBOM", "zero\u200bwidth", "\u200d", "\u2028\u2029", "\x00", "a\x00b", "\x01\x02\x03",
    "\x7f\x80\x9f", "\ufffd", "\ufffd\ufffd", "\uffff", "\U0010ffff", "\U000e0001", "\ue000",
    "<u>", "<u>x", "<u>xx", "<<u>>", "<u", "u>", "<|a|>", "<|a|", "a<|a|>b", "<u><u>x<u>",
    "<|im_start|>", "<|im_start|>user\n", "<|im_start", "<|im_start|><|im_end|>",
    "<user_inst>", "</user_inst>", "<user_inst></user_inst>", "<user_inst>x</user_inst>",
    "<<user_inst>>", "x<user_inst>y", " <user_inst> ", "<|audio_pad|><|audio_pad|>",
    "<unk>", "<s>", "</s>", "<pad>", "<c1>", "<sep>", "a<sep>b", "<0x41>", "<0xZZ>",
    "hello   world", "  leading", "trailing  ", " \t mixed \n whitespace \r ",
    "\U0001f600\U0001f389\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\u2764\ufe0f", "1\ufe0f\u20e3", "\U0001f1ef\U0001f1f5",
    "\uff21\uff22\uff23", "\uff71\uff72", "\u30ac\u3099", "\u304b\u3099",
    "\u1100\u1161\u11a8", "\uac01", "\u3131\u314f", "\ufb01\ufb00", "\u2167", "\u33a1", "\u2103",
    "\u00bd\u00be\u2153", "x\u00b2", "\U0001d400\U0001d41a", "\u2126", "\u212b",
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\u05e9\u05dc\u05d5\u05dd",
    "\u0928\u092e\u0938\u094d\u0924\u0947", "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
    "\u1f00\u1f71", "\u0130\u0131", "\u00df\u1e9e", "\u01c5\u01c6",
    "a" * 300, "ab" * 200, "abc" * 150, " " * 100 + "x", "\u4e00" * 100, "\U0001f600" * 50,
    "the the the the the", "The quick brown fox jumps over the lazy dog.",
]

BLOCKS = [
    (0x20, 0x7e, 30), (0x0, 0x1f, 3), (0x7f, 0x9f, 2), (0xa0, 0xff, 6), (0x100, 0x24f, 4),
    (0x250, 0x2af, 1), (0x2b0, 0x2ff, 1), (0x300, 0x36f, 4), (0x370, 0x3ff, 3), (0x400, 0x4ff, 4),
    (0x530, 0x58f, 1), (0x590, 0x5ff, 2), (0x600, 0x6ff, 3), (0x900, 0x97f, 2), (0xe00, 0xe7f, 2),
    (0x10a0, 0x10ff, 1), (0x1100, 0x11ff, 2), (0x1e00, 0x1fff, 2), (0x2000, 0x206f, 4),
    (0x2070, 0x209f, 1), (0x20a0, 0x20cf, 1), (0x2100, 0x218f, 3), (0x2190, 0x23ff, 1),
    (0x2460, 0x24ff, 2), (0x2500, 0x27bf, 1), (0x2e80, 0x2fdf, 1), (0x3000, 0x303f, 3),
    (0x3040, 0x30ff, 5), (0x3130, 0x318f, 1), (0x3200, 0x33ff, 2), (0x3400, 0x4dbf, 1),
    (0x4e00, 0x9fff, 10), (0xa000, 0xa4cf, 1), (0xac00, 0xd7a3, 5), (0xe000, 0xf8ff, 1),
    (0xf900, 0xfaff, 2), (0xfb00, 0xfb4f, 1), (0xfe00, 0xfe0f, 1), (0xfe30, 0xfe6f, 1),
    (0xff00, 0xffef, 4), (0xfff0, 0xffff, 1), (0x10000, 0x1ffff, 2), (0x1d400, 0x1d7ff, 1),
    (0x1f300, 0x1faff, 4), (0x20000, 0x2fa1f, 2), (0xe0000, 0xe01ef, 1), (0xf0000, 0x10ffff, 1),
]
BLOCK_WEIGHTS = [w for _, _, w in BLOCKS]

SPACES = [" ", " ", " ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\u2009", "\u200b", "\u2581"]


def random_char(rng):
    lo, hi, _ = rng.choices(BLOCKS, BLOCK_WEIGHTS)[0]
    while True:
        cp = rng.randint(lo, hi)
        if not 0xD800 <= cp <= 0xDFFF:
            return chr(cp)


def random_text(rng, vocab_words, specials):
    kind = rng.random()
    parts = []
    n = rng.choice([1, 2, 3, 5, 8, 13, 30, 80])
    for _ in range(n):
        r = rng.random()
        if kind < 0.35 and r < 0.7:
            parts.append(rng.choice(vocab_words))
        elif r < 0.55:
            parts.append("".join(random_char(rng) for _ in range(rng.randint(1, 6))))
        elif r < 0.75:
            parts.append(rng.choice(SPACES))
        elif r < 0.85 and specials:
            s = rng.choice(specials)
            if rng.random() < 0.3:  # a broken or doubled special
                cut = rng.randint(0, len(s))
                s = s[:cut] if rng.random() < 0.5 else s + s[cut:]
            parts.append(s)
        elif r < 0.92:
            parts.append(rng.choice(NASTY)[:20])
        else:
            parts.append(random_char(rng) * rng.randint(2, 40))
    return "".join(parts)


def random_bytes(rng, text):
    """Corrupt the UTF-8 of text with invalid sequences."""
    b = bytearray(text.encode("utf-8"))
    bad = [b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc0\xaf", b"\xc3", b"\xe2\x96", b"\xed\xa0\x80",
           b"\xf4\x90\x80\x80", b"\xf0\x9f\x98", b"\xe0\x80\xaf", b"\xf8\x88\x80\x80\x80", b"\xc2"]
    for _ in range(rng.randint(1, 4)):
        pos = rng.randint(0, len(b))
        b[pos:pos] = rng.choice(bad)
    return bytes(b)


def pieces_json(pieces):
    out = []
    for p in pieces:
        if isinstance(p, bytes):
            try:
                p = p.decode("utf-8")
            except UnicodeDecodeError:
                return None
        out.append(p)
    return out


def model_cases(name, path, rng, n_random, n_bytes, n_decode):
    sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, path))
    proto = load_proto(path)
    vocab_words = []
    specials = []
    for p in proto.pieces:
        if p.type == pb.ModelProto.SentencePiece.NORMAL:
            vocab_words.append(p.piece.replace("\u2581", " "))
        elif p.type in (pb.ModelProto.SentencePiece.USER_DEFINED, pb.ModelProto.SentencePiece.CONTROL,
                        pb.ModelProto.SentencePiece.UNKNOWN):
            specials.append(p.piece)

    texts = list(NASTY)
    for f in ("real/tokenize.json", "tiny-a/golden/tokenize.json"):
        with open(os.path.join(FIXTURES, f)) as fh:
            texts += [e["text"] for e in json.load(fh)]
    texts += [random_text(rng, vocab_words, specials) for _ in range(n_random)]
    cases = []
    for i, t in enumerate(texts):
        c = {"text": t, "ids": sp.encode(t, out_type=int)}
        if i % 4 == 0:  # pieces for a quarter of the cases keeps the file small
            c["pieces"] = sp.encode(t, out_type=str)
        cases.append(c)
    for _ in range(n_bytes):
        b = random_bytes(rng, rng.choice(texts)[:200])
        ids = sp.encode(b, out_type=int)
        c = {"bytes": base64.b64encode(b).decode(), "ids": ids}
        pieces = pieces_json(sp.encode(b, out_type=str))
        if pieces is not None and len(cases) % 4 == 0:
            c["pieces"] = pieces
        cases.append(c)

    size = sp.get_piece_size()
    byte_ids = [i for i in range(size) if sp.is_byte(i)]
    odd_ids = [i for i in range(size) if sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i)]
    space_ids = [i for i in range(size) if "\u2581" in sp.id_to_piece(i)]
    decodes = []
    for _ in range(n_decode):
        ids = []
        for _ in range(rng.choice([0, 1, 2, 3, 5, 10, 30])):
            r = rng.random()
            if r < 0.3 and byte_ids:
                ids.append(rng.choice(byte_ids))
            elif r < 0.4 and odd_ids:
                ids.append(rng.choice(odd_ids))
            elif r < 0.6 and space_ids:
                ids.append(rng.choice(space_ids))
            else:
                ids.append(rng.randrange(size))
        decodes.append({"ids": ids, "text": sp.decode(ids)})
    # Round trips of real encodings too.
    for c in cases[:150]:
        decodes.append({"ids": c["ids"], "text": sp.decode(c["ids"])})
    print(f"{name}: {len(cases)} encodings, {len(decodes)} decodings", file=sys.stderr)
    return {"path": path, "encode": cases, "decode": decodes}


def charsmap_keys(blob):
    """All keys of a precompiled charsmap's Darts-clone trie, in DFS order."""
    (size,) = struct.unpack_from("<I", blob, 0)
    units = struct.unpack_from("<%dI" % (size // 4), blob, 4)

    def offset(u):
        return (u >> 10) << ((u & (1 << 9)) >> 6)

    def label(u):
        return u & ((1 << 31) | 0xFF)

    keys = []
    stack = [(0, b"")]
    while stack:
        pos, prefix = stack.pop()
        base = pos ^ offset(units[pos])
        for c in range(255, 0, -1):
            child = base ^ c
            if child < len(units) and label(units[child]) == c:
                key = prefix + bytes([c])
                if (units[child] >> 8) & 1:
                    keys.append(key)
                stack.append((child, key))
    return keys


def digest_lines(sp, texts):
    h = hashlib.sha256()
    for label, t in texts:
        ids = sp.encode(t, out_type=int)
        h.update(("%s:%s\n" % (label, ",".join(map(str, ids)))).encode())
    return h.hexdigest()


def digests():
    path = MODELS["real"]
    sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, path))
    scalars = ((("%X" % cp), chr(cp)) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)
    d_scalars = digest_lines(sp, scalars)
    keys = charsmap_keys(load_proto(path).normalizer_spec.precompiled_charsmap)
    valid = []
    for k in keys:
        try:
            valid.append(k.decode("utf-8"))
        except UnicodeDecodeError:
            pass

    def key_texts():
        for k in valid:
            label = k.encode("utf-8").hex()
            yield label, k
            yield label + "+", "a" + k + "b"
            yield label + "*", k + k

    d_keys = digest_lines(sp, key_texts())
    print(f"charsmap: {len(keys)} keys, {len(valid)} valid UTF-8", file=sys.stderr)
    return {"model": path, "scalars_sha256": d_scalars, "charsmap_keys": len(keys),
            "charsmap_valid_keys": len(valid), "charsmap_keys_sha256": d_keys}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--train":
        train(sys.argv[2])
    elif len(sys.argv) != 1:
        sys.exit(__doc__)
    rng = random.Random(20260521)
    out = {"sentencepiece_version": spm.__version__, "models": {}}
    plan = {"real": (2000, 300, 400), "tiny-a": (600, 100, 150)}
    for name, path in MODELS.items():
        n_random, n_bytes, n_decode = plan.get(name, (500, 80, 150))
        out["models"][name] = model_cases(name, path, rng, n_random, n_bytes, n_decode)
    out["digests"] = digests()
    data = json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with open(os.path.join(HERE, "differential.json.gz"), "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0) as z:
            z.write(data)


if __name__ == "__main__":
    main()
