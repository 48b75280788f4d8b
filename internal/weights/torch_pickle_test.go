package weights

import (
	"archive/zip"
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// plain turns unpickled values into comparable Go values (no cycles allowed).
func plain(v any) any {
	switch v := v.(type) {
	case tuple:
		out := []any{"tuple"}
		for _, e := range v {
			out = append(out, plain(e))
		}
		return out
	case *list:
		out := []any{"list"}
		for _, e := range v.items {
			out = append(out, plain(e))
		}
		return out
	case *dict:
		out := []any{"dict"}
		for i, k := range v.keys {
			out = append(out, []any{plain(k), plain(v.vals[i])})
		}
		return out
	case *global:
		return "global " + v.module + "." + v.name
	case pyBytes:
		return "bytes " + string(v)
	}
	return v
}

func TestUnpickleValues(t *testing.T) {
	long9 := []byte{opLong1, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00}
	tests := []struct {
		name   string
		pickle []byte
		want   any
	}{
		{"none", newPB().proto(2).op(opNone, opStop).bytes(), nil},
		{"bools", newPB().proto(2).op(opNewTrue, opNewFalse, opTuple2, opStop).bytes(), []any{"tuple", true, false}},
		{"ints", newPB().proto(2).op(opMark).int(0).int(255).int(65535).int(-5).int(1<<31).int(-1<<40).op(opTuple, opStop).bytes(),
			[]any{"tuple", int64(0), int64(255), int64(65535), int64(-5), int64(1 << 31), int64(-1 << 40)}},
		{"long1 forms", append(newPB().proto(2).op(opMark, opLong1, 0, opLong1, 1, 0xff, opLong1, 2, 0x00, 0x80).bytes(), append(long9, opTuple, opStop)...),
			[]any{"tuple", int64(0), int64(-1), int64(-32768), int64(math.MaxInt64)}},
		{"long4", newPB().proto(2).op(opLong4, 2, 0, 0, 0, 0x34, 0x12, opStop).bytes(), int64(0x1234)},
		{"float", newPB().proto(2).float(-1.5e-7).op(opStop).bytes(), -1.5e-7},
		{"strings", newPB().proto(4).op(opMark).sstr("héllo").str("").op(opBinUnicode8, 2, 0, 0, 0, 0, 0, 0, 0, 'o', 'k', opTuple, opStop).bytes(),
			[]any{"tuple", "héllo", "", "ok"}},
		{"bytes", newPB().proto(3).op(opMark, opShortBinBytes, 2, 0, 1, opBinBytes, 1, 0, 0, 0, 'x', opBinBytes8, 0, 0, 0, 0, 0, 0, 0, 0, opTuple, opStop).bytes(),
			[]any{"tuple", "bytes \x00\x01", "bytes x", "bytes "}},
		{"tuples", newPB().proto(2).op(opEmptyTuple).int(1).op(opTuple1).int(1).int(2).op(opTuple2).int(1).int(2).int(3).op(opTuple3, opTuple3, opTuple1, opStop).bytes(),
			[]any{"tuple", []any{"tuple", []any{"tuple", int64(1)}, []any{"tuple", int64(1), int64(2)}, []any{"tuple", int64(1), int64(2), int64(3)}}}},
		{"lists", newPB().proto(2).op(opEmptyList).int(1).op(opAppend, opMark).int(2).int(3).op(opAppends, opMark).int(4).op(opList, opAppend, opStop).bytes(),
			[]any{"list", int64(1), int64(2), int64(3), []any{"list", int64(4)}}},
		{"dict order and replace", newPB().proto(2).op(opEmptyDict).str("b").int(1).op(opSetItem, opMark).str("a").int(2).str("b").int(3).op(opSetItems, opStop).bytes(),
			[]any{"dict", []any{"b", int64(3)}, []any{"a", int64(2)}}},
		{"python key equality", newPB().proto(2).op(opMark).int(1).str("int").op(opNewTrue).str("bool").float(1.0).str("float").float(1.5).str("x").op(opNone).op(opNone).op(opDict, opStop).bytes(),
			[]any{"dict", []any{int64(1), "float"}, []any{1.5, "x"}, []any{nil, nil}}},
		{"tuple keys", newPB().proto(2).op(opEmptyDict).int(1).str("a").op(opTuple2).int(0).op(opSetItem).int(1).str("a").op(opTuple2).int(9).op(opSetItem, opStop).bytes(),
			[]any{"dict", []any{[]any{"tuple", int64(1), "a"}, int64(9)}}},
		{"memo shares objects", newPB().proto(2).op(opEmptyList, opBinPut, 0, opEmptyList, opBinGet, 0, opAppend, opBinGet, 0).int(7).op(opAppend, opPop, opStop).bytes(),
			[]any{"list", []any{"list", int64(7)}}},
		{"memoize and frame", newPB().proto(4).op(opFrame, 4, 0, 0, 0, 0, 0, 0, 0).sstr("x").op(opMemoize).sstr("y").op(opMemoize, opBinGet, 0, opBinGet, 1, opTuple3, opStop).bytes(),
			[]any{"tuple", "y", "x", "y"}},
		{"pop, pop mark, dup", newPB().proto(2).int(1).op(opMark).int(2).int(3).op(opPopMark, opMark, opPop, opDup, opTuple2, opStop).bytes(),
			[]any{"tuple", int64(1), int64(1)}},
		{"global", newPB().proto(2).global("torch", "bfloat16").op(opStop).bytes(), "global torch.bfloat16"},
		{"stack global", newPB().proto(4).sstr("torch").sstr("FloatStorage").op(opStackGlobal, opStop).bytes(), "global torch.FloatStorage"},
		{"ordered dict from pairs", newPB().proto(2).global("collections", "OrderedDict").op(opEmptyList).str("k").int(5).op(opTuple2, opAppend, opTuple1, opReduce, opStop).bytes(),
			[]any{"dict", []any{"k", int64(5)}}},
		{"state dict metadata build", newPB().proto(2).global("collections", "OrderedDict").op(opEmptyTuple, opReduce, opEmptyDict).str("_metadata").
			global("collections", "OrderedDict").op(opEmptyTuple, opReduce, opSetItem, opBuild, opStop).bytes(), []any{"dict"}},
		{"build with slot state", newPB().proto(2).op(opEmptyDict, opNone, opEmptyDict, opTuple2, opBuild, opStop).bytes(), []any{"dict"}},
		{"trailing bytes ignored", append(newPB().proto(2).op(opNone, opStop).bytes(), "garbage"...), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := unpickle(tc.pickle, newEnv())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, plain(v)); d != "" {
				t.Errorf("value (-want +got):\n%s", d)
			}
		})
	}
}

func TestUnpickleErrors(t *testing.T) {
	deepMarks := append(newPB().proto(2).bytes(), bytes.Repeat([]byte{opMark}, maxMarkDepth+1)...)
	bigStack := append(newPB().proto(2).bytes(), bytes.Repeat([]byte{opNone}, maxStack+1)...)
	nestedTuple := newPB().proto(2).op(opEmptyDict, opEmptyTuple)
	for range 100000 {
		nestedTuple.op(opTuple1)
	}
	nestedTuple.op(opNone, opSetItem, opStop)
	tests := []struct {
		name   string
		pickle []byte
		want   string
	}{
		{"empty", nil, "without STOP"},
		{"no stop", newPB().proto(2).op(opNone).bytes(), "without STOP"},
		{"stop on empty stack", newPB().proto(2).op(opStop).bytes(), "stack underflow"},
		{"unknown opcode", newPB().proto(2).op(0xff).bytes(), "offset 2 (0xff unknown): opcode not supported"},
		{"INST", newPB().proto(2).op('i').bytes(), `(0x69 'i' INST)`},
		{"NEWOBJ", newPB().proto(2).op(0x81).bytes(), "NEWOBJ"},
		{"EXT1", newPB().proto(2).op(0x82, 1).bytes(), "EXT1"},
		{"text INT", newPB().proto(2).op('I').bytes(), "INT"},
		{"BINSTRING", newPB().proto(2).op('T', 1, 0, 0, 0, 'x').bytes(), "BINSTRING"},
		{"protocol 6", newPB().proto(6).op(opNone, opStop).bytes(), "unsupported pickle protocol 6"},
		{"huge BINUNICODE", newPB().proto(2).op(opBinUnicode, 0xff, 0xff, 0xff, 0xff, 'a').bytes(), "needs 4294967295 bytes, only 1 left"},
		{"huge BINUNICODE8", newPB().proto(4).op(opBinUnicode8, 0, 0, 0, 0, 0, 0, 0, 0x80).bytes(), "needs 9223372036854775808 bytes"},
		{"huge BINBYTES8", newPB().proto(4).op(opBinBytes8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff).bytes(), "needs 18446744073709551615 bytes"},
		{"huge frame", newPB().proto(4).op(opFrame, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0).bytes(), "frame of 4294967295 bytes"},
		{"truncated BININT", newPB().proto(2).op(opBinInt, 1, 2).bytes(), "needs 4 bytes, only 2 left"},
		{"invalid utf-8", newPB().proto(2).op(opShortBinUnicode, 2, 0xc3, 0x28, opStop).bytes(), "not valid UTF-8"},
		{"long too big", newPB().proto(2).op(opLong1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1, opStop).bytes(), "does not fit in 64 bits"},
		{"long 2^63", newPB().proto(2).op(opLong1, 9, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, opStop).bytes(), "does not fit in 64 bits"},
		{"negative long4", newPB().proto(2).op(opLong4, 0xff, 0xff, 0xff, 0xff).bytes(), "negative LONG4 length"},
		{"tuple without mark", newPB().proto(2).op(opNone, opTuple).bytes(), "no MARK"},
		{"tuple2 underflow", newPB().proto(2).op(opNone, opTuple2).bytes(), "stack underflow"},
		{"underflow below mark", newPB().proto(2).op(opNone, opMark, opTuple1).bytes(), "stack underflow"},
		{"append across mark", newPB().proto(2).op(opEmptyList, opMark, opNone, opAppend).bytes(), "stack underflow"},
		{"append to dict", newPB().proto(2).op(opEmptyDict, opNone, opAppend).bytes(), "APPEND to a dict, not a list"},
		{"appends to tuple", newPB().proto(2).op(opEmptyTuple, opMark, opNone, opAppends).bytes(), "APPENDS to a tuple"},
		{"setitem on list", newPB().proto(2).op(opEmptyList, opNone, opNone, opSetItem).bytes(), "SETITEM on a list"},
		{"setitems odd", newPB().proto(2).op(opEmptyDict, opMark, opNone, opSetItems).bytes(), "odd number (1)"},
		{"unhashable key", newPB().proto(2).op(opEmptyDict, opEmptyList, opNone, opSetItem).bytes(), "unhashable dict key of type list"},
		{"key too long", newPB().proto(2).op(opEmptyDict).str(strings.Repeat("k", maxKeyLen+1)).op(opNone, opSetItem).bytes(), "exceeds the 1024 byte limit"},
		{"deep tuple key", nestedTuple.bytes(), "dict key has more than 64 parts"},
		{"memo get missing", newPB().proto(2).op(opBinGet, 3).bytes(), "memo has no entry 3"},
		{"memo put empty", newPB().proto(2).op(opBinPut, 0).bytes(), "stack underflow"},
		{"marks too deep", deepMarks, "MARKs nested deeper than 1024"},
		{"stack too big", bigStack, "stack exceeds 1048576 values"},
		{"global without newline", newPB().proto(2).op(opGlobal).bytes(), "no newline"},
		{"global line too long", append(newPB().proto(2).op(opGlobal).bytes(), strings.Repeat("m", 1000)+"\nx\n"...), "no newline within 256 bytes"},
		{"stack global of ints", newPB().proto(4).int(1).int(2).op(opStackGlobal).bytes(), "STACK_GLOBAL needs two str"},
		{"forbidden stack global", newPB().proto(4).sstr("posix").sstr("system").op(opStackGlobal).bytes(), "global posix.system, which is not allowed"},
		{"long forbidden global", newPB().proto(4).str(strings.Repeat("m", 5000)).sstr("x").op(opStackGlobal).bytes(), "not allowed"},
		{"torch.load is not allowed", newPB().proto(2).global("torch.serialization", "load").bytes(), "torch.serialization.load"},
		{"qtensor is not allowed", newPB().proto(2).global("torch._utils", "_rebuild_qtensor").bytes(), "torch._utils._rebuild_qtensor"},
		{"reduce args not tuple", newPB().proto(2).global("collections", "OrderedDict").op(opEmptyList, opReduce).bytes(), "REDUCE arguments are a list"},
		{"reduce non global", newPB().proto(2).op(opNone, opEmptyTuple, opReduce).bytes(), "REDUCE calls a None"},
		{"call storage class", newPB().proto(2).global("torch", "FloatStorage").op(opEmptyTuple, opReduce).bytes(), "calling torch.FloatStorage is not supported"},
		{"call dtype", newPB().proto(2).global("torch", "float32").op(opEmptyTuple, opReduce).bytes(), "calling torch.float32"},
		{"ordered dict of int", newPB().proto(2).global("collections", "OrderedDict").int(3).op(opTuple1, opReduce).bytes(), "OrderedDict of a int"},
		{"ordered dict bad pair", newPB().proto(2).global("collections", "OrderedDict").op(opEmptyList, opNone, opAppend, opTuple1, opReduce).bytes(), "want a (key, value) pair"},
		{"build on list", newPB().proto(2).op(opEmptyList, opEmptyDict, opBuild).bytes(), "BUILD on a list"},
		{"build with int state", newPB().proto(2).op(opEmptyDict).int(1).op(opBuild).bytes(), "with a int state"},
		{"persid not tuple", newPB().proto(2).str("x").op(opBinPersID).bytes(), "persistent id is a str"},
		{"persid module", newPB().proto(2).op(opMark).str("module").op(opNone, opNone, opNone, opNone, opTuple, opBinPersID).bytes(), "persistent id of type str \"module\""},
		{"persid class not storage", newPB().proto(2).op(opMark).str("storage").global("torch", "float32").str("0").str("cpu").int(1).op(opTuple, opBinPersID).bytes(), "not a storage class"},
		{"persid key int", newPB().proto(2).op(opMark).str("storage").global("torch", "FloatStorage").int(0).str("cpu").int(1).op(opTuple, opBinPersID).bytes(), "storage key int 0"},
		{"persid key empty", newPB().proto(2).op(opMark).str("storage").global("torch", "FloatStorage").str("").str("cpu").int(1).op(opTuple, opBinPersID).bytes(), "storage key str"},
		{"persid location", newPB().proto(2).op(opMark).str("storage").global("torch", "FloatStorage").str("0").int(0).int(1).op(opTuple, opBinPersID).bytes(), "location int 0"},
		{"persid negative numel", newPB().proto(2).op(opMark).str("storage").global("torch", "FloatStorage").str("0").str("cpu").int(-1).op(opTuple, opBinPersID).bytes(), "element count int -1"},
		{"persid numel overflow", newPB().proto(2).op(opMark).str("storage").global("torch", "DoubleStorage").str("0").str("cpu").int(math.MaxInt64/4).op(opTuple, opBinPersID).bytes(), "element count"},
		{"storage sizes disagree", newPB().proto(2).op(opMark).str("storage").global("torch", "FloatStorage").str("0").str("cpu").int(4).op(opTuple, opBinPersID).
			op(opMark).str("storage").global("torch", "FloatStorage").str("0").str("cpu").int(5).op(opTuple, opBinPersID).bytes(), `storage "0" declared with 16 bytes and with 20 bytes`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := unpickle(tc.pickle, newEnv())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestDecodeLong(t *testing.T) {
	tests := []struct {
		in   []byte
		want int64
		ok   bool
	}{
		{nil, 0, true},
		{[]byte{0x7f}, 127, true},
		{[]byte{0x80}, -128, true},
		{[]byte{0x80, 0x00}, 128, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, math.MaxInt64, true},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0x80}, math.MinInt64, true},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff}, math.MinInt64, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0}, math.MaxInt64, true},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0x80, 0}, 0, false},                               // 2^63
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff}, 0, false},       // -2^63 - 1
		{[]byte{0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19}, 0, false}, // torch's legacy magic
	}
	for _, tc := range tests {
		got, err := decodeLong(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("decodeLong(% x) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// pidArgs writes a storage persistent id.
func (p *pb) pid(module, class, key string, numel int64) *pb {
	return p.op(opMark).str("storage").global(module, class).str(key).str("cpu").int(numel).op(opTuple, opBinPersID)
}

// callPickle writes {"t": fn(args...)}.
func callPickle(module, fn string, args func(p *pb)) []byte {
	p := newPB().proto(2).op(opEmptyDict).str("t").global(module, fn).op(opMark)
	args(p)
	return p.op(opTuple, opReduce, opSetItem, opStop).bytes()
}

func hooks(p *pb) *pb { return p.global("collections", "OrderedDict").op(opEmptyTuple, opReduce) }

func TestRebuild(t *testing.T) {
	v2args := func(p *pb) {
		p.pid("torch", "HalfStorage", "0", 10).int(2).ints([]int64{2, 3}).ints([]int64{1, 2}).op(opNewFalse)
		hooks(p)
	}
	type want struct {
		key    string
		dtype  string
		offset int64
		size   []int64
		stride []int64
		nbytes int64
	}
	half := want{"0", "torch.float16", 2, []int64{2, 3}, []int64{1, 2}, 20}
	tests := []struct {
		name   string
		pickle []byte
		want   want
		err    string
	}{
		{"v1", callPickle("torch._utils", "_rebuild_tensor", func(p *pb) {
			p.pid("torch", "HalfStorage", "0", 10).int(2).ints([]int64{2, 3}).ints([]int64{1, 2})
		}), half, ""},
		{"v2", callPickle("torch._utils", "_rebuild_tensor_v2", v2args), half, ""},
		{"v2 with metadata", callPickle("torch._utils", "_rebuild_tensor_v2", func(p *pb) {
			v2args(p)
			p.op(opEmptyDict).str("conj").op(opNewTrue, opSetItem)
		}), half, ""},
		{"v3 untyped", callPickle("torch._utils", "_rebuild_tensor_v3", func(p *pb) {
			p.pid("torch", "UntypedStorage", "7", 24).int(1).ints([]int64{5}).ints([]int64{2}).op(opNewTrue)
			hooks(p).global("torch", "bfloat16")
		}), want{"7", "torch.bfloat16", 1, []int64{5}, []int64{2}, 24}, ""},
		{"v3 with metadata", callPickle("torch._utils", "_rebuild_tensor_v3", func(p *pb) {
			p.pid("torch.storage", "UntypedStorage", "7", 24).int(0).ints([]int64{}).ints([]int64{}).op(opNewFalse, opNone)
			p.global("torch", "float").op(opEmptyDict)
		}), want{"7", "torch.float32", 0, []int64{}, []int64{}, 24}, ""},
		{"parameter", callPickle("torch._utils", "_rebuild_parameter", func(p *pb) {
			p.global("torch._utils", "_rebuild_tensor_v2").op(opMark)
			v2args(p)
			p.op(opTuple, opReduce, opNewTrue)
			hooks(p)
		}), half, ""},
		{"parameter with state", callPickle("torch._utils", "_rebuild_parameter_with_state", func(p *pb) {
			p.global("torch._utils", "_rebuild_tensor_v2").op(opMark)
			v2args(p)
			p.op(opTuple, opReduce, opNewTrue)
			hooks(p).op(opEmptyDict)
		}), half, ""},
		{"from type tensor", callPickle("torch._tensor", "_rebuild_from_type_v2", func(p *pb) {
			p.global("torch._utils", "_rebuild_tensor_v2").global("torch", "Tensor").op(opMark)
			v2args(p)
			p.op(opTuple, opEmptyDict).str("note").str("x").op(opSetItem)
		}), half, ""},
		{"from type parameter", callPickle("torch._tensor", "_rebuild_from_type_v2", func(p *pb) {
			p.global("torch._utils", "_rebuild_tensor_v2").global("torch.nn.parameter", "Parameter").op(opMark)
			v2args(p)
			p.op(opTuple, opNone)
		}), half, ""},
		{"from type other class", callPickle("torch._tensor", "_rebuild_from_type_v2", func(p *pb) {
			p.global("torch._utils", "_rebuild_tensor_v2").global("collections", "OrderedDict").op(opMark)
			v2args(p)
			p.op(opTuple, opNone)
		}), want{}, "only torch.Tensor and Parameter"},
		{"from type of itself", callPickle("torch._tensor", "_rebuild_from_type_v2", func(p *pb) {
			p.global("torch._tensor", "_rebuild_from_type_v2").global("torch", "Tensor").op(opEmptyTuple, opNone)
		}), want{}, "not a tensor rebuild function"},
		{"from type of OrderedDict", callPickle("torch._tensor", "_rebuild_from_type_v2", func(p *pb) {
			p.global("collections", "OrderedDict").global("torch", "Tensor").op(opEmptyTuple, opNone)
		}), want{}, "not a tensor rebuild function"},
		{"v3 dtype not a dtype", callPickle("torch._utils", "_rebuild_tensor_v3", func(p *pb) {
			p.pid("torch", "UntypedStorage", "7", 24).int(0).ints([]int64{1}).ints([]int64{1}).op(opNewFalse)
			hooks(p).int(5)
		}), want{}, "dtype argument is a int"},
		{"v2 too few args", callPickle("torch._utils", "_rebuild_tensor_v2", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 1).int(0).ints([]int64{1}).ints([]int64{1}).op(opNewFalse)
		}), want{}, "takes 6 to 7 arguments, pickle passes 5"},
		{"v1 too many args", callPickle("torch._utils", "_rebuild_tensor", v2args), want{}, "takes 4 arguments, pickle passes 6"},
		{"requires_grad not bool", callPickle("torch._utils", "_rebuild_tensor_v2", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 1).int(0).ints([]int64{1}).ints([]int64{1}).int(1)
			hooks(p)
		}), want{}, "requires_grad is a int"},
		{"hooks not dict", callPickle("torch._utils", "_rebuild_tensor_v2", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 1).int(0).ints([]int64{1}).ints([]int64{1}).op(opNewFalse, opEmptyList)
		}), want{}, "argument is a list"},
		{"negative stride", callPickle("torch._utils", "_rebuild_tensor", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 4).int(3).ints([]int64{4}).ints([]int64{-1})
		}), want{}, "stride[0] is negative (-1)"},
		{"negative offset", callPickle("torch._utils", "_rebuild_tensor", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 4).int(-1).ints([]int64{4}).ints([]int64{1})
		}), want{}, "storage offset is int -1"},
		{"size of strings", callPickle("torch._utils", "_rebuild_tensor", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 4).int(0).op(opMark).str("4").op(opTuple).ints([]int64{1})
		}), want{}, "size[0] is a str"},
		{"size not tuple", callPickle("torch._utils", "_rebuild_tensor", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 4).int(0).int(4).ints([]int64{1})
		}), want{}, "size is a int"},
		{"sizes and strides differ", callPickle("torch._utils", "_rebuild_tensor", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 4).int(0).ints([]int64{2, 2}).ints([]int64{1})
		}), want{}, "2 sizes but 1 strides"},
		{"too many dims", callPickle("torch._utils", "_rebuild_tensor", func(p *pb) {
			p.pid("torch", "FloatStorage", "0", 4).int(0).ints(make([]int64, 65)).ints(make([]int64, 65))
		}), want{}, "65 dimensions"},
		{"storage not storage", callPickle("torch._utils", "_rebuild_tensor", func(p *pb) {
			p.op(opNone).int(0).ints([]int64{1}).ints([]int64{1})
		}), want{}, "storage is a None"},
		{"parameter of int", callPickle("torch._utils", "_rebuild_parameter", func(p *pb) {
			p.int(1).op(opNewTrue)
			hooks(p)
		}), want{}, "data is a int, not a tensor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := unpickle(tc.pickle, newEnv())
			var entries []namedTensor
			if err == nil {
				entries, err = stateDict(v)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].name != "t" {
				t.Fatalf("entries %+v", entries)
			}
			r := entries[0].t
			got := want{r.st.key, r.dtype.name, r.offset, r.size, r.stride, r.st.nbytes}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("tensor (-want +got):\n%s", d)
			}
		})
	}
}

func TestStateDict(t *testing.T) {
	ten := func(p *pb, key string) *pb {
		return p.tensor(tspec{class: "FloatStorage", key: key, numel: 1, size: []int64{1}, stride: []int64{1}})
	}
	// {"a": {"a": {... 100000 deep}}}, built outside-in through the memo.
	deep := newPB().proto(2).op(opEmptyDict).put(0)
	for i := uint32(1); i <= 100000; i++ {
		deep.sstr("a").op(opEmptyDict).put(i).op(opSetItem, opPop).get(i)
	}
	deep.op(opPop).get(0).op(opStop)
	// d[i+1] = {"a": d[i], "b": d[i]}: 2^30 paths to one tensor.
	dag := newPB().proto(2).op(opEmptyDict).sstr("t")
	ten(dag, "0").op(opSetItem).put(0)
	for i := uint32(1); i <= 30; i++ {
		dag.op(opEmptyDict).sstr("a").get(i - 1).op(opSetItem).sstr("b").get(i - 1).op(opSetItem).put(i)
	}
	dag.op(opStop)

	tests := []struct {
		name   string
		pickle []byte
		want   []string
		err    string
	}{
		{"flat", statePickle(tspec{name: "x", class: "FloatStorage", key: "0", numel: 1, size: []int64{}, stride: []int64{}}), []string{"x"}, ""},
		{"empty", newPB().proto(2).op(opEmptyDict, opStop).bytes(), nil, ""},
		{"nested", ten(newPB().proto(2).op(opEmptyDict).str("enc").op(opEmptyDict).str("w"), "0").op(opSetItem, opSetItem).str("dec.b").pipe(ten, "1").op(opSetItem, opStop).bytes(),
			[]string{"enc.w", "dec.b"}, ""},
		{"state_dict wrapper", ten(newPB().proto(2).op(opEmptyDict).str("epoch").int(3).op(opSetItem).str("state_dict").op(opEmptyDict).str("w"), "0").op(opSetItem, opSetItem, opStop).bytes(),
			[]string{"w"}, ""},
		{"model then module", ten(newPB().proto(2).op(opEmptyDict).str("model").op(opEmptyDict).str("module").op(opEmptyDict).str("w"), "0").op(opSetItem, opSetItem, opSetItem, opStop).bytes(),
			[]string{"w"}, ""},
		{"wrapper not dict is an entry", ten(newPB().proto(2).op(opEmptyDict).str("model").str("resnet").op(opSetItem).str("w"), "0").op(opSetItem, opStop).bytes(),
			nil, `entry "model" is a str, not a tensor`},
		{"non tensor entry", ten(newPB().proto(2).op(opEmptyDict).str("w"), "0").op(opSetItem).str("epoch").int(3).op(opSetItem, opStop).bytes(),
			nil, `state dict entry "epoch" is a int, not a tensor`},
		{"non str key", ten(newPB().proto(2).op(opEmptyDict).int(0), "0").op(opSetItem, opStop).bytes(), nil, "state dict key int 0 under \"\" is not a str"},
		{"root list", newPB().proto(2).op(opEmptyList, opStop).bytes(), nil, "checkpoint holds a list, not a dict of tensors"},
		{"root tensor", ten(newPB().proto(2), "0").op(opStop).bytes(), nil, "checkpoint holds a tensor"},
		{"duplicate flattened name", ten(ten(newPB().proto(2).op(opEmptyDict).str("a.b"), "0").op(opSetItem).str("a").op(opEmptyDict).str("b"), "1").op(opSetItem, opSetItem, opStop).bytes(),
			nil, `two entries named "a.b"`},
		{"deep nesting", deep.bytes(), nil, "dicts nested deeper than 32"},
		{"exponential sharing", dag.bytes(), nil, "more than 262144 entries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := unpickle(tc.pickle, newEnv())
			var entries []namedTensor
			if err == nil {
				entries, err = stateDict(v)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.name)
			}
			if d := cmp.Diff(tc.want, names); d != "" {
				t.Errorf("names (-want +got):\n%s", d)
			}
		})
	}
}

// pipe applies a builder helper inline.
func (p *pb) pipe(f func(*pb, string) *pb, arg string) *pb { return f(p, arg) }

// TestGather checks views against index-by-index materialisation.
func TestGather(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(rng.IntN(256))
	}
	fixed := []struct {
		es           int64
		offset       int64
		size, stride []int64
	}{
		{4, 0, []int64{}, []int64{}},
		{4, 5, []int64{}, []int64{}},
		{2, 3, []int64{4, 6}, []int64{1, 4}},        // transposed with offset
		{4, 0, []int64{3, 1, 2}, []int64{2, 99, 1}}, // size-1 dim with odd stride: contiguous
		{1, 7, []int64{5}, []int64{0}},              // broadcast
		{8, 2, []int64{2, 3, 4}, []int64{12, 1, 3}},
		{2, 0, []int64{3, 0, 2}, []int64{0, 0, 0}},
	}
	type view = struct {
		es           int64
		offset       int64
		size, stride []int64
	}
	views := make([]view, 0, 300)
	for _, f := range fixed {
		views = append(views, view(f))
	}
	for range 300 {
		n := rng.IntN(5)
		v := view{es: []int64{1, 2, 4, 8}[rng.IntN(4)], offset: int64(rng.IntN(20)), size: make([]int64, n), stride: make([]int64, n)}
		for d := range n {
			v.size[d] = int64(rng.IntN(5))
			v.stride[d] = int64(rng.IntN(7))
		}
		views = append(views, v)
	}
	for _, v := range views {
		st := &storage{key: "0", nbytes: int64(len(buf))}
		dt := &dtypeInfo{name: "test", st: map[int64]DType{1: "U8", 2: "BF16", 4: "F32", 8: "I64"}[v.es], size: v.es}
		p, err := makePlan("v", &tensorRef{st: st, dtype: dt, offset: v.offset, size: v.size, stride: v.stride})
		if err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		want := naiveGather(buf, v.es, v.offset, v.size, v.stride)
		got := make([]byte, p.nbytes)
		if p.nbytes > 0 {
			// A window that starts at the view's first byte, as loadStorage passes it.
			gather(got, buf[p.lo:p.hi], p.lo, &p)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%+v (contiguous=%v): gather differs from the reference", v, p.contiguous)
		}
	}
}

func TestMakePlanErrors(t *testing.T) {
	st := &storage{key: "0", nbytes: 64}
	f32 := allowed["torch.float32"].dtype
	tests := []struct {
		name string
		ref  tensorRef
		want string
	}{
		{"shape overflow", tensorRef{st: st, dtype: f32, size: []int64{1<<31 - 1, 1<<31 - 1, 1<<31 - 1}, stride: []int64{0, 0, 0}}, "overflows"},
		{"dimension too large", tensorRef{st: st, dtype: f32, size: []int64{1 << 40}, stride: []int64{0}}, "too large"},
		{"extent overflow", tensorRef{st: st, dtype: f32, size: []int64{3}, stride: []int64{math.MaxInt64/2 + 1}}, "overflows"},
		{"offset past end", tensorRef{st: st, dtype: f32, offset: 16, size: []int64{}, stride: []int64{}}, "needs 17 elements"},
		{"untyped tail", tensorRef{st: &storage{key: "u", nbytes: 7}, dtype: f32, size: []int64{2}, stride: []int64{1}}, "needs 2 elements, storage \"u\" holds 7 bytes"},
		{"unsupported", tensorRef{st: st, dtype: allowed["torch.uint16"].dtype, size: []int64{1}, stride: []int64{1}}, "dtype torch.uint16 is not supported"},
	}
	for _, tc := range tests {
		if _, err := makePlan("x", &tc.ref); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// An empty tensor needs no storage at all, wherever it points.
	if _, err := makePlan("e", &tensorRef{st: &storage{key: "z"}, dtype: f32, offset: 99, size: []int64{0, 5}, stride: []int64{5, 1}}); err != nil {
		t.Errorf("empty tensor: %v", err)
	}
}

// picklesOf returns the data.pkl of each committed checkpoint.
func picklesOf(tb testing.TB) [][]byte {
	var out [][]byte
	for _, name := range []string{"basic.pt", "nested.pt", "proto4.pt", "tiny-a-lm/pytorch_model.bin"} {
		data, err := os.ReadFile(filepath.Join("testdata", "torch", name))
		if err != nil {
			tb.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range zr.File {
			if strings.HasSuffix(f.Name, "/data.pkl") {
				out = append(out, recordOf(tb, data, f.Name))
			}
		}
	}
	return out
}

func FuzzUnpickle(f *testing.F) {
	for _, p := range picklesOf(f) {
		f.Add(p)
	}
	f.Add(statePickle(tspec{name: "t", class: "BFloat16Storage", key: "0", numel: 12, offset: 1, size: []int64{3, 2}, stride: []int64{1, 4}}))
	f.Add(newPB().proto(2).global("os", "system").str("true").op(opTuple1, opReduce, opStop).bytes())
	f.Add(newPB().proto(2).op(opBinUnicode, 0xff, 0xff, 0xff, 0x7f).bytes())
	f.Add(newPB().proto(4).op(opFrame, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff).bytes())
	f.Add(newPB().proto(2).op(opLong1, 10, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19).bytes())
	f.Add(append(newPB().proto(2).bytes(), bytes.Repeat([]byte{opMark}, 2000)...))
	f.Add(newPB().proto(2).op(opEmptyList, opBinPut, 0, opBinGet, 0, opAppend, opStop).bytes())
	f.Add(newPB().proto(2).op(opEmptyDict, opBinPut, 0).str("a").op(opBinGet, 0, opSetItem, opStop).bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := unpickle(data, newEnv())
		if err != nil {
			return
		}
		entries, err := stateDict(v)
		if err != nil {
			return
		}
		// Materialise small views from a synthetic storage and compare with the reference.
		for _, e := range entries {
			p, err := makePlan(e.name, e.t)
			if err != nil || e.t.st.nbytes > 1<<16 || p.nbytes > 1<<16 {
				continue
			}
			buf := make([]byte, e.t.st.nbytes)
			for i := range buf {
				buf[i] = byte(i*7 + i>>8)
			}
			got := make([]byte, p.nbytes)
			if p.nbytes > 0 {
				gather(got, buf[p.lo:p.hi], p.lo, &p)
			}
			if want := naiveGather(buf, p.es, p.offset, p.size, p.stride); !bytes.Equal(got, want) {
				t.Fatalf("%s: gather differs from the reference", e.name)
			}
		}
	})
}

func BenchmarkUnpickleTinyA(b *testing.B) {
	p := picklesOf(b)[3]
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		v, err := unpickle(p, newEnv())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := stateDict(v); err != nil {
			b.Fatal(err)
		}
	}
}
