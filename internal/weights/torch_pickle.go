package weights

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The pickle virtual machine below implements the opcodes that protocols 2–5 use for plain
// data (ints, floats, strings, bytes, tuples, lists, dicts), plus GLOBAL/STACK_GLOBAL,
// REDUCE, BUILD and BINPERSID, whose meaning is delegated to an env that only knows the
// torch allow-list. Nothing is ever imported or executed: a "global" is a name that maps to
// a Go behaviour or is an error.
//
// Every opcode consumes at least one input byte and does O(1) work apart from copying the
// items it consumes, so running a pickle is linear in its size; the explicit limits bound
// memory and make hostile input fail fast with a clear message.

// Limits of the unpickler. Real state-dict pickles use a few stack slots, marks nested
// three deep and about ten memo entries per tensor.
const (
	maxStack     = 1 << 20 // values on the stack
	maxMemo      = 1 << 22 // memo entries
	maxMarkDepth = 1 << 10 // nested MARKs
	maxKeyLen    = 1 << 10 // bytes of a string dict key (bounds hashing work per SETITEM)
	maxKeyParts  = 64      // scalars in one (tuple) dict key
	maxNameLen   = 256     // bytes of a global's module+name or a storage key
)

// Pickle opcodes (see CPython Lib/pickletools.py).
const (
	opMark            = '('
	opStop            = '.'
	opPop             = '0'
	opPopMark         = '1'
	opDup             = '2'
	opBinFloat        = 'G'
	opBinInt          = 'J'
	opBinInt1         = 'K'
	opBinInt2         = 'M'
	opNone            = 'N'
	opBinPersID       = 'Q'
	opReduce          = 'R'
	opBinUnicode      = 'X'
	opEmptyList       = ']'
	opAppend          = 'a'
	opBuild           = 'b'
	opGlobal          = 'c'
	opDict            = 'd'
	opEmptyDict       = '}'
	opAppends         = 'e'
	opBinGet          = 'h'
	opLongBinGet      = 'j'
	opList            = 'l'
	opBinPut          = 'q'
	opLongBinPut      = 'r'
	opSetItem         = 's'
	opTuple           = 't'
	opEmptyTuple      = ')'
	opSetItems        = 'u'
	opBinBytes        = 'B'
	opShortBinBytes   = 'C'
	opProto           = 0x80
	opTuple1          = 0x85
	opTuple2          = 0x86
	opTuple3          = 0x87
	opNewTrue         = 0x88
	opNewFalse        = 0x89
	opLong1           = 0x8a
	opLong4           = 0x8b
	opShortBinUnicode = 0x8c
	opBinUnicode8     = 0x8d
	opBinBytes8       = 0x8e
	opStackGlobal     = 0x93
	opMemoize         = 0x94
	opFrame           = 0x95
)

// opNames names every pickle opcode, for error messages about the ones we refuse.
var opNames = map[byte]string{
	'(': "MARK", '.': "STOP", '0': "POP", '1': "POP_MARK", '2': "DUP", 'F': "FLOAT",
	'I': "INT", 'J': "BININT", 'K': "BININT1", 'L': "LONG", 'M': "BININT2", 'N': "NONE",
	'P': "PERSID", 'Q': "BINPERSID", 'R': "REDUCE", 'S': "STRING", 'T': "BINSTRING",
	'U': "SHORT_BINSTRING", 'V': "UNICODE", 'X': "BINUNICODE", 'a': "APPEND", 'b': "BUILD",
	'c': "GLOBAL", 'd': "DICT", '}': "EMPTY_DICT", 'e': "APPENDS", 'g': "GET", 'h': "BINGET",
	'i': "INST", 'j': "LONG_BINGET", 'l': "LIST", ']': "EMPTY_LIST", 'o': "OBJ", 'p': "PUT",
	'q': "BINPUT", 'r': "LONG_BINPUT", 's': "SETITEM", 't': "TUPLE", ')': "EMPTY_TUPLE",
	'u': "SETITEMS", 'G': "BINFLOAT", 'B': "BINBYTES", 'C': "SHORT_BINBYTES",
	0x80: "PROTO", 0x81: "NEWOBJ", 0x82: "EXT1", 0x83: "EXT2", 0x84: "EXT4", 0x85: "TUPLE1",
	0x86: "TUPLE2", 0x87: "TUPLE3", 0x88: "NEWTRUE", 0x89: "NEWFALSE", 0x8a: "LONG1",
	0x8b: "LONG4", 0x8c: "SHORT_BINUNICODE", 0x8d: "BINUNICODE8", 0x8e: "BINBYTES8",
	0x8f: "EMPTY_SET", 0x90: "ADDITEMS", 0x91: "FROZENSET", 0x92: "NEWOBJ_EX",
	0x93: "STACK_GLOBAL", 0x94: "MEMOIZE", 0x95: "FRAME", 0x96: "BYTEARRAY8",
	0x97: "NEXT_BUFFER", 0x98: "READONLY_BUFFER",
}

func opName(op byte) string {
	name, ok := opNames[op]
	if !ok {
		name = "unknown"
	}
	if op >= 0x20 && op < 0x7f {
		return fmt.Sprintf("0x%02x %q %s", op, rune(op), name)
	}
	return fmt.Sprintf("0x%02x %s", op, name)
}

// Values on the pickle stack: nil (None), bool, int64, float64, string, pyBytes, tuple,
// *list, *dict, and the torch objects of env (*global, *storageRef, *tensorRef).
type (
	pyBytes []byte
	tuple   []any
	list    struct{ items []any }
	// dict keeps insertion order, as Python dicts and OrderedDict do.
	dict struct {
		keys  []any
		vals  []any
		index map[string]int
	}
)

func newDict() *dict { return &dict{index: make(map[string]int)} }

// set inserts or replaces key, keeping the position of an existing key.
func (d *dict) set(k, v any) error {
	h, err := hashKey(k)
	if err != nil {
		return err
	}
	if i, ok := d.index[h]; ok {
		d.vals[i] = v
		return nil
	}
	d.index[h] = len(d.keys)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	return nil
}

// get returns the value of a string key.
func (d *dict) get(k string) (any, bool) {
	h, err := hashKey(k)
	if err != nil {
		return nil, false
	}
	i, ok := d.index[h]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// hashKey encodes a hashable value so that keys Python considers equal (1, 1.0, True)
// collide. Only scalars, globals and tuples of them are accepted, and their size is
// bounded so that reusing one memoised key many times stays linear.
func hashKey(k any) (string, error) {
	parts := 0
	b, err := appendKey(nil, k, &parts)
	return string(b), err
}

func appendKey(b []byte, k any, parts *int) ([]byte, error) {
	*parts++
	if *parts > maxKeyParts {
		return nil, fmt.Errorf("dict key has more than %d parts", maxKeyParts)
	}
	switch k := k.(type) {
	case nil:
		return append(b, 'N'), nil
	case bool:
		if k {
			return append(b, 'i', '1', ';'), nil
		}
		return append(b, 'i', '0', ';'), nil
	case int64:
		b = append(b, 'i')
		return append(strconv.AppendInt(b, k, 10), ';'), nil
	case float64:
		if k == math.Trunc(k) && math.Abs(k) < 1<<63 {
			b = append(b, 'i')
			return append(strconv.AppendInt(b, int64(k), 10), ';'), nil
		}
		b = append(b, 'f')
		return append(strconv.AppendUint(b, math.Float64bits(k), 16), ';'), nil
	case string:
		if len(k) > maxKeyLen {
			return nil, fmt.Errorf("string dict key of %d bytes exceeds the %d byte limit", len(k), maxKeyLen)
		}
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(k)), 10)
		return append(append(b, ':'), k...), nil
	case pyBytes:
		if len(k) > maxKeyLen {
			return nil, fmt.Errorf("bytes dict key of %d bytes exceeds the %d byte limit", len(k), maxKeyLen)
		}
		b = append(b, 'b')
		b = strconv.AppendInt(b, int64(len(k)), 10)
		return append(append(b, ':'), k...), nil
	case *global:
		return append(append(b, 'g'), k.module+"."+k.name+";"...), nil
	case tuple:
		b = append(b, '(')
		for _, e := range k {
			var err error
			if b, err = appendKey(b, e, parts); err != nil {
				return nil, err
			}
		}
		return append(b, ')'), nil
	}
	return nil, fmt.Errorf("unhashable dict key of type %s", typeName(k))
}

// typeName names a value's Python type for error messages.
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case pyBytes:
		return "bytes"
	case tuple:
		return "tuple"
	case *list:
		return "list"
	case *dict:
		return "dict"
	case *global:
		return v.module + "." + v.name
	case *storageRef:
		return "storage"
	case *tensorRef:
		return "tensor"
	}
	return fmt.Sprintf("%T", v)
}

// unpickler runs one pickle.
type unpickler struct {
	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[uint32]any
	env   *env
}

// unpickle runs a whole pickle and returns the value STOP yields. Trailing bytes after
// STOP are ignored, as Python does.
func unpickle(data []byte, e *env) (any, error) {
	u := &unpickler{data: data, memo: make(map[uint32]any), env: e}
	for {
		if u.pos >= len(u.data) {
			return nil, fmt.Errorf("pickle ends at offset %d without STOP", u.pos)
		}
		at := u.pos
		op := u.data[u.pos]
		u.pos++
		if op == opStop {
			v, err := u.pop()
			if err != nil {
				return nil, fmt.Errorf("pickle offset %d (%s): %w", at, opName(op), err)
			}
			return v, nil
		}
		if err := u.step(op); err != nil {
			return nil, fmt.Errorf("pickle offset %d (%s): %w", at, opName(op), err)
		}
	}
}

var errUnderflow = errors.New("stack underflow")

func (u *unpickler) base() int {
	if n := len(u.marks); n > 0 {
		return u.marks[n-1]
	}
	return 0
}

func (u *unpickler) push(v any) error {
	if len(u.stack) >= maxStack {
		return fmt.Errorf("stack exceeds %d values", maxStack)
	}
	u.stack = append(u.stack, v)
	return nil
}

func (u *unpickler) pop() (any, error) {
	if len(u.stack) <= u.base() {
		return nil, errUnderflow
	}
	v := u.stack[len(u.stack)-1]
	u.stack[len(u.stack)-1] = nil
	u.stack = u.stack[:len(u.stack)-1]
	return v, nil
}

// pop2 pops the two topmost values: below, then the top.
func (u *unpickler) pop2() (below, top any, err error) {
	if len(u.stack)-u.base() < 2 {
		return nil, nil, errUnderflow
	}
	n := len(u.stack)
	below, top = u.stack[n-2], u.stack[n-1]
	clear(u.stack[n-2:])
	u.stack = u.stack[:n-2]
	return below, top, nil
}

func (u *unpickler) top() (any, error) {
	if len(u.stack) <= u.base() {
		return nil, errUnderflow
	}
	return u.stack[len(u.stack)-1], nil
}

// popMark removes and returns the values above the innermost MARK.
func (u *unpickler) popMark() ([]any, error) {
	n := len(u.marks)
	if n == 0 {
		return nil, errors.New("no MARK on the stack")
	}
	m := u.marks[n-1]
	u.marks = u.marks[:n-1]
	items := slices.Clone(u.stack[m:])
	clear(u.stack[m:])
	u.stack = u.stack[:m]
	return items, nil
}

func (u *unpickler) read(n uint64) ([]byte, error) {
	if n > uint64(len(u.data)-u.pos) {
		return nil, fmt.Errorf("needs %d bytes, only %d left", n, len(u.data)-u.pos)
	}
	b := u.data[u.pos : u.pos+int(n)]
	u.pos += int(n)
	return b, nil
}

func (u *unpickler) readUint(size int) (uint64, error) {
	b, err := u.read(uint64(size))
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b)), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// readLine reads a GLOBAL argument: text up to '\n'.
func (u *unpickler) readLine() (string, error) {
	for i := u.pos; i < len(u.data) && i-u.pos <= maxNameLen; i++ {
		if u.data[i] == '\n' {
			s := string(u.data[u.pos:i])
			u.pos = i + 1
			return s, nil
		}
	}
	return "", fmt.Errorf("no newline within %d bytes", maxNameLen)
}

func (u *unpickler) memoPut(idx uint32) error {
	v, err := u.top()
	if err != nil {
		return err
	}
	if _, ok := u.memo[idx]; !ok && len(u.memo) >= maxMemo {
		return fmt.Errorf("memo exceeds %d entries", maxMemo)
	}
	u.memo[idx] = v
	return nil
}

func (u *unpickler) memoGet(idx uint64) error {
	v, ok := u.memo[uint32(idx)]
	if !ok {
		return fmt.Errorf("memo has no entry %d", idx)
	}
	return u.push(v)
}

// pushString pushes n bytes of UTF-8 text.
func (u *unpickler) pushString(n uint64) error {
	b, err := u.read(n)
	if err != nil {
		return err
	}
	if !utf8.Valid(b) {
		return errors.New("string is not valid UTF-8")
	}
	return u.push(string(b))
}

func (u *unpickler) pushBytes(n uint64) error {
	b, err := u.read(n)
	if err != nil {
		return err
	}
	return u.push(pyBytes(b))
}

// decodeLong decodes a little-endian two's-complement integer (LONG1/LONG4) that must fit
// in an int64.
func decodeLong(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, nil
	}
	neg := b[len(b)-1]&0x80 != 0
	for len(b) > 8 {
		last := b[len(b)-1]
		if (neg && last != 0xff) || (!neg && last != 0) {
			return 0, fmt.Errorf("integer of %d bytes does not fit in 64 bits", len(b))
		}
		b = b[:len(b)-1]
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if neg && len(b) < 8 {
		v |= ^uint64(0) << (8 * len(b))
	}
	if (int64(v) < 0) != neg {
		return 0, errors.New("integer does not fit in 64 bits")
	}
	return int64(v), nil
}

func (u *unpickler) pushTuple(n int) error {
	if len(u.stack)-u.base() < n {
		return errUnderflow
	}
	t := slices.Clone(tuple(u.stack[len(u.stack)-n:]))
	clear(u.stack[len(u.stack)-n:])
	u.stack = u.stack[:len(u.stack)-n]
	return u.push(t)
}

func (u *unpickler) setItems(d any, kv []any) error {
	dd, ok := d.(*dict)
	if !ok {
		return fmt.Errorf("SETITEM on a %s, not a dict", typeName(d))
	}
	if len(kv)%2 != 0 {
		return fmt.Errorf("odd number (%d) of keys and values", len(kv))
	}
	for i := 0; i < len(kv); i += 2 {
		if err := dd.set(kv[i], kv[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// lengthSize is the size of the length prefix of a string or bytes opcode.
func lengthSize(op byte) int {
	switch op {
	case opShortBinUnicode, opShortBinBytes:
		return 1
	case opBinUnicode, opBinBytes:
		return 4
	}
	return 8
}

// step executes one opcode (other than STOP).
func (u *unpickler) step(op byte) error {
	switch op {
	case opProto:
		v, err := u.readUint(1)
		if err != nil {
			return err
		}
		if v > 5 {
			return fmt.Errorf("unsupported pickle protocol %d", v)
		}
		return nil
	case opFrame:
		n, err := u.readUint(8)
		if err != nil {
			return err
		}
		if n > uint64(len(u.data)-u.pos) {
			return fmt.Errorf("frame of %d bytes, only %d left", n, len(u.data)-u.pos)
		}
		return nil
	case opMark:
		if len(u.marks) >= maxMarkDepth {
			return fmt.Errorf("MARKs nested deeper than %d", maxMarkDepth)
		}
		u.marks = append(u.marks, len(u.stack))
		return nil
	case opPop:
		if len(u.stack) > u.base() {
			_, err := u.pop()
			return err
		}
		_, err := u.popMark()
		return err
	case opPopMark:
		_, err := u.popMark()
		return err
	case opDup:
		v, err := u.top()
		if err != nil {
			return err
		}
		return u.push(v)
	case opNone:
		return u.push(nil)
	case opNewTrue:
		return u.push(true)
	case opNewFalse:
		return u.push(false)
	case opBinInt:
		v, err := u.readUint(4)
		if err != nil {
			return err
		}
		return u.push(int64(int32(uint32(v))))
	case opBinInt1:
		v, err := u.readUint(1)
		if err != nil {
			return err
		}
		return u.push(int64(v))
	case opBinInt2:
		v, err := u.readUint(2)
		if err != nil {
			return err
		}
		return u.push(int64(v))
	case opLong1, opLong4:
		size := 1
		if op == opLong4 {
			size = 4
		}
		n, err := u.readUint(size)
		if err != nil {
			return err
		}
		if op == opLong4 && int32(uint32(n)) < 0 {
			return fmt.Errorf("negative LONG4 length %d", int32(uint32(n)))
		}
		b, err := u.read(n)
		if err != nil {
			return err
		}
		v, err := decodeLong(b)
		if err != nil {
			return err
		}
		return u.push(v)
	case opBinFloat:
		b, err := u.read(8)
		if err != nil {
			return err
		}
		return u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
	case opShortBinUnicode, opBinUnicode, opBinUnicode8:
		n, err := u.readUint(lengthSize(op))
		if err != nil {
			return err
		}
		return u.pushString(n)
	case opShortBinBytes, opBinBytes, opBinBytes8:
		n, err := u.readUint(lengthSize(op))
		if err != nil {
			return err
		}
		return u.pushBytes(n)
	case opEmptyTuple:
		return u.push(tuple{})
	case opTuple1, opTuple2, opTuple3:
		return u.pushTuple(int(op-opTuple1) + 1)
	case opTuple:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		return u.push(tuple(items))
	case opEmptyList:
		return u.push(&list{})
	case opList:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		return u.push(&list{items: items})
	case opAppend:
		v, err := u.pop()
		if err != nil {
			return err
		}
		l, err := u.top()
		if err != nil {
			return err
		}
		ll, ok := l.(*list)
		if !ok {
			return fmt.Errorf("APPEND to a %s, not a list", typeName(l))
		}
		ll.items = append(ll.items, v)
		return nil
	case opAppends:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		l, err := u.top()
		if err != nil {
			return err
		}
		ll, ok := l.(*list)
		if !ok {
			return fmt.Errorf("APPENDS to a %s, not a list", typeName(l))
		}
		ll.items = append(ll.items, items...)
		return nil
	case opEmptyDict:
		return u.push(newDict())
	case opDict:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		d := newDict()
		if err := u.setItems(d, items); err != nil {
			return err
		}
		return u.push(d)
	case opSetItem:
		k, v, err := u.pop2()
		if err != nil {
			return err
		}
		d, err := u.top()
		if err != nil {
			return err
		}
		return u.setItems(d, []any{k, v})
	case opSetItems:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		d, err := u.top()
		if err != nil {
			return err
		}
		return u.setItems(d, items)
	case opBinPut:
		i, err := u.readUint(1)
		if err != nil {
			return err
		}
		return u.memoPut(uint32(i))
	case opLongBinPut:
		i, err := u.readUint(4)
		if err != nil {
			return err
		}
		return u.memoPut(uint32(i))
	case opMemoize:
		return u.memoPut(uint32(len(u.memo)))
	case opBinGet:
		i, err := u.readUint(1)
		if err != nil {
			return err
		}
		return u.memoGet(i)
	case opLongBinGet:
		i, err := u.readUint(4)
		if err != nil {
			return err
		}
		return u.memoGet(i)
	case opGlobal:
		module, err := u.readLine()
		if err != nil {
			return err
		}
		name, err := u.readLine()
		if err != nil {
			return err
		}
		g, err := findGlobal(module, name)
		if err != nil {
			return err
		}
		return u.push(g)
	case opStackGlobal:
		mv, nv, err := u.pop2()
		if err != nil {
			return err
		}
		module, ok1 := mv.(string)
		name, ok2 := nv.(string)
		if !ok1 || !ok2 {
			return fmt.Errorf("STACK_GLOBAL needs two str, got %s and %s", typeName(mv), typeName(nv))
		}
		g, err := findGlobal(module, name)
		if err != nil {
			return err
		}
		return u.push(g)
	case opReduce:
		fv, av, err := u.pop2()
		if err != nil {
			return err
		}
		args, ok := av.(tuple)
		if !ok {
			return fmt.Errorf("REDUCE arguments are a %s, not a tuple", typeName(av))
		}
		fn, ok := fv.(*global)
		if !ok {
			return fmt.Errorf("REDUCE calls a %s, not an allowed global", typeName(fv))
		}
		v, err := u.env.call(fn, args)
		if err != nil {
			return err
		}
		return u.push(v)
	case opBuild:
		state, err := u.pop()
		if err != nil {
			return err
		}
		obj, err := u.top()
		if err != nil {
			return err
		}
		return build(obj, state)
	case opBinPersID:
		pid, err := u.pop()
		if err != nil {
			return err
		}
		v, err := u.env.persistentLoad(pid)
		if err != nil {
			return err
		}
		return u.push(v)
	}
	return errors.New("opcode not supported by the restricted unpickler")
}
