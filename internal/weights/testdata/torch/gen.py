#!/usr/bin/python3
"""Generate the torch.save fixtures of the torch reader in internal/weights (run once; outputs are committed).

Generated with Debian bookworm's python3-torch (torch.__version__ == "1.13.0a0",
package 1.13.1+dfsg-4) and Python 3.11:

    cd internal/weights/testdata/torch && /usr/bin/python3 gen.py

Writes:
  basic.pt     nn.Module.state_dict() (pickle protocol 2, zip format, OrderedDict with the
               `_metadata` attribute set by BUILD): float32/float16/bfloat16/float64/int64/
               int32/bool tensors, an embedding tied to a head (two names, one storage), views
               with storage offsets, transposed (non-contiguous) views, a scalar, an empty tensor.
  nested.pt    {"model": state dict with a nested plain dict, "epoch": 3, ...} (protocol 2).
  proto4.pt    pickle protocol 4 (FRAME, MEMOIZE, STACK_GLOBAL, SHORT_BINUNICODE), an
               nn.Parameter (torch._utils._rebuild_parameter), the same tensor object stored
               under two names (BINGET of a memoised tensor), and two tensors written the way
               torch >= 2.1 writes dtypes without a legacy storage class: an UntypedStorage
               persistent id plus torch._utils._rebuild_tensor_v3(..., dtype). torch 1.13 has no
               _rebuild_tensor_v3, so a stand-in with that module/name is installed only to
               make the pickler emit the global; its arguments are what torch 2.x writes.
  legacy.pt    _use_new_zipfile_serialization=False (pre-1.6 format): must be rejected.
  tiny-a-lm/pytorch_model.bin
               ../../../../testdata/tiny-a/lm/model.safetensors converted to torch, with
               text_lm_head.weight tied to transformer.wte.weight and audio_lm_heads.{c}.weight
               tied to audio_embeddings.{c}.weight (same tensor object, as state_dict() of the
               upstream module would). config.json and tokenizer.model are copied beside it.
  golden.json  for every zip file above: tensors in order with name, dtype (safetensors
               spelling), shape, values, and hex of the contiguous little-endian bytes.
"""
import collections
import json
import shutil
import struct

import torch

ST_DTYPE = {
    torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}
SAME_SIZE_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def raw_bytes(t):
    flat = t.detach().contiguous().reshape(-1)
    if t.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    else:
        flat = flat.view(SAME_SIZE_INT[flat.element_size()])
    return flat.numpy().astype(flat.numpy().dtype.newbyteorder("<")).tobytes()


def describe(sd):
    out = []
    for name, t in sd.items():
        if t.dtype == torch.bool:
            values = [bool(v) for v in t.reshape(-1).tolist()]
        elif t.dtype.is_floating_point:
            values = [float(v) for v in t.detach().double().reshape(-1).tolist()]
        else:
            values = [int(v) for v in t.reshape(-1).tolist()]
        out.append({"name": name, "dtype": ST_DTYPE[t.dtype], "shape": list(t.shape),
                    "values": values, "hex": raw_bytes(t).hex()})
    return out


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.emb = torch.nn.Embedding(5, 4)
        self.head = torch.nn.Linear(4, 5, bias=False)
        self.head.weight = self.emb.weight  # tied: two state-dict names, one storage
        base = torch.arange(24, dtype=torch.float32) / 8 - 1
        self.register_buffer("view_offset", base[6:14].view(2, 4))  # storage offset 6
        self.register_buffer("transposed", base.view(4, 6).t())  # strides (1, 6)
        b = (torch.arange(12, dtype=torch.float32) * 0.3 - 1.5).to(torch.bfloat16).view(3, 4)
        self.register_buffer("bf16", b)
        self.register_buffer("bf16_view_t", b[1:, 1:].t())  # offset 5, strides (1, 4)
        self.register_buffer("f16", (torch.arange(6, dtype=torch.float32) * 0.7 - 2).to(torch.float16).view(2, 3))
        self.register_buffer("f64", torch.tensor([1.0 / 3, -2.5e-300, 7.0], dtype=torch.float64))
        self.register_buffer("i64", torch.tensor([[0, -1], [2**40, -(2**62)]], dtype=torch.int64))
        self.register_buffer("i32", torch.tensor([7, -8, 9], dtype=torch.int32))
        self.register_buffer("mask", torch.tensor([True, False, True]))
        self.register_buffer("scalar", torch.tensor(3.5))
        self.register_buffer("empty", torch.zeros(0, 3))


def save(obj, path, **kw):
    torch.save(obj, path, **kw)
    return obj


def main():
    torch.manual_seed(0)
    golden = {"torch_version": torch.__version__}

    m = Small()
    sd = m.state_dict()
    assert sd["emb.weight"].data_ptr() == sd["head.weight"].data_ptr()
    assert not sd["transposed"].is_contiguous() and sd["view_offset"].storage_offset() == 6
    save(sd, "basic.pt")
    golden["basic.pt"] = describe(sd)

    inner = collections.OrderedDict()
    inner["enc.weight"] = torch.randn(2, 3)
    inner["sub"] = {"bias": torch.tensor([0.5, -0.25], dtype=torch.float16)}
    save({"model": inner, "epoch": 3, "optimizer_name": "adam", "lr": 1e-3,
          "flags": [True, None, (1, 2.5)]}, "nested.pt")
    golden["nested.pt"] = describe(collections.OrderedDict(
        [("enc.weight", inner["enc.weight"]), ("sub.bias", inner["sub"]["bias"])]))

    def _rebuild_tensor_v3(*args):  # stand-in, see the module doc
        raise RuntimeError("not callable")
    _rebuild_tensor_v3.__module__ = "torch._utils"
    _rebuild_tensor_v3.__qualname__ = "_rebuild_tensor_v3"
    torch._utils._rebuild_tensor_v3 = _rebuild_tensor_v3

    class V3:
        """Pickles like a torch >= 2.1 tensor of a dtype without a legacy storage class."""
        def __init__(self, t):
            self.t = t

        def __reduce_ex__(self, proto):
            t = self.t
            return (_rebuild_tensor_v3, (t.storage()._storage, t.storage_offset(), tuple(t.size()),
                                         t.stride(), False, collections.OrderedDict(), t.dtype))

    shared = torch.randn(3, 2).to(torch.bfloat16)
    v3a = torch.randn(2, 3)
    v3b = (torch.arange(10, dtype=torch.float32) - 4).to(torch.bfloat16)[3:9].view(2, 3).t()
    p4 = collections.OrderedDict()
    p4["param"] = torch.nn.Parameter(torch.randn(4))
    p4["shared_a"] = shared
    p4["shared_b"] = shared  # same object: second occurrence is a memo BINGET
    p4["v3_f32"] = V3(v3a)
    p4["v3_bf16_t"] = V3(v3b)
    save(p4, "proto4.pt", pickle_protocol=4)
    golden["proto4.pt"] = describe(collections.OrderedDict(
        [("param", p4["param"]), ("shared_a", shared), ("shared_b", shared),
         ("v3_f32", v3a), ("v3_bf16_t", v3b)]))

    save({"w": torch.ones(2)}, "legacy.pt", _use_new_zipfile_serialization=False)

    src = "../../../../testdata/tiny-a/lm/"
    with open(src + "model.safetensors", "rb") as f:
        blob = f.read()
    (hlen,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + hlen])
    body = blob[8 + hlen:]
    entries = sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                     key=lambda kv: kv[1]["data_offsets"][0])
    st_types = {v: k for k, v in ST_DTYPE.items()}
    lm = collections.OrderedDict()
    for name, e in entries:
        lo, hi = e["data_offsets"]
        t = torch.frombuffer(bytearray(body[lo:hi]), dtype=st_types[e["dtype"]]).reshape(e["shape"])
        lm[name] = t.clone()
    ties = [("text_lm_head.weight", "transformer.wte.weight")]
    ties += [(f"audio_lm_heads.{c}.weight", f"audio_embeddings.{c}.weight") for c in range(8)]
    for head, emb in ties:
        assert torch.equal(lm[head], lm[emb]), head
        lm[head] = lm[emb]
    save(lm, "tiny-a-lm/pytorch_model.bin")
    shutil.copyfile(src + "config.json", "tiny-a-lm/config.json")
    shutil.copyfile(src + "tokenizer.model", "tiny-a-lm/tokenizer.model")

    with open("golden.json", "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
