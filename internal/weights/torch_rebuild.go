package weights

import (
	"fmt"
	"math"
	"strings"
)

// forbiddenGlobalError reports a pickle that references a global outside the allow-list. Such a
// file is refused before anything in it is interpreted further; nothing is ever imported
// or called.
type forbiddenGlobalError struct {
	Module, Name string
}

func (e *forbiddenGlobalError) Error() string {
	return fmt.Sprintf("pickle references global %s.%s, which is not allowed in a torch state dict (only tensors, storages, dtypes and OrderedDict are)",
		clip(e.Module), clip(e.Name))
}

// clip shortens hostile strings in error messages.
func clip(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return s
}

type globalKind int

const (
	kindOrderedDict globalKind = iota
	kindRebuildTensor
	kindRebuildTensorV2
	kindRebuildTensorV3
	kindRebuildParameter
	kindRebuildParameterState
	kindRebuildFromType
	kindTensorClass
	kindParameterClass
	kindStorageClass
	kindDType
)

// global is an allow-listed name from the pickle. Storage classes and dtypes carry their
// element type.
type global struct {
	module, name string
	kind         globalKind
	dtype        *dtypeInfo
}

// dtypeInfo describes a torch element type. st is empty for types nanovox cannot use; such
// tensors are an error naming the tensor.
type dtypeInfo struct {
	name string // torch spelling, e.g. "torch.bfloat16"
	st   DType
	size int64
}

// torchTypes lists torch element types: the legacy storage class (empty if none), the
// dtype name, aliases, the DType and the element size.
var torchTypes = []struct {
	storage, dtype string
	aliases        []string
	st             DType
	size           int64
}{
	{"DoubleStorage", "float64", []string{"double"}, F64, 8},
	{"FloatStorage", "float32", []string{"float"}, F32, 4},
	{"HalfStorage", "float16", []string{"half"}, F16, 2},
	{"BFloat16Storage", "bfloat16", nil, BF16, 2},
	{"LongStorage", "int64", []string{"long"}, I64, 8},
	{"IntStorage", "int32", []string{"int"}, I32, 4},
	{"ShortStorage", "int16", []string{"short"}, I16, 2},
	{"CharStorage", "int8", nil, I8, 1},
	{"ByteStorage", "uint8", nil, U8, 1},
	{"BoolStorage", "bool", nil, Bool, 1},
	{"ComplexDoubleStorage", "complex128", []string{"cdouble"}, "", 16},
	{"ComplexFloatStorage", "complex64", []string{"cfloat"}, "", 8},
	{"", "complex32", []string{"chalf"}, "", 4},
	{"QUInt8Storage", "quint8", nil, "", 1},
	{"QInt8Storage", "qint8", nil, "", 1},
	{"QInt32Storage", "qint32", nil, "", 4},
	{"QUInt4x2Storage", "quint4x2", nil, "", 1},
	{"QUInt2x4Storage", "quint2x4", nil, "", 1},
	{"", "uint16", nil, "", 2},
	{"", "uint32", nil, "", 4},
	{"", "uint64", nil, "", 8},
	{"", "float8_e4m3fn", nil, "", 1},
	{"", "float8_e5m2", nil, "", 1},
	{"", "float8_e4m3fnuz", nil, "", 1},
	{"", "float8_e5m2fnuz", nil, "", 1},
	{"", "float8_e8m0fnu", nil, "", 1},
}

// allowed maps "module.name" to the globals a torch state dict may reference.
var allowed = func() map[string]*global {
	m := make(map[string]*global)
	add := func(module, name string, kind globalKind, dt *dtypeInfo) {
		m[module+"."+name] = &global{module: module, name: name, kind: kind, dtype: dt}
	}
	add("collections", "OrderedDict", kindOrderedDict, nil)
	add("torch._utils", "_rebuild_tensor", kindRebuildTensor, nil)
	add("torch._utils", "_rebuild_tensor_v2", kindRebuildTensorV2, nil)
	add("torch._utils", "_rebuild_tensor_v3", kindRebuildTensorV3, nil)
	add("torch._utils", "_rebuild_parameter", kindRebuildParameter, nil)
	add("torch._utils", "_rebuild_parameter_with_state", kindRebuildParameterState, nil)
	add("torch._tensor", "_rebuild_from_type_v2", kindRebuildFromType, nil)
	add("torch", "Tensor", kindTensorClass, nil)
	add("torch._tensor", "Tensor", kindTensorClass, nil)
	add("torch.nn.parameter", "Parameter", kindParameterClass, nil)
	bytesType := &dtypeInfo{name: "torch.uint8", st: U8, size: 1}
	for _, n := range []string{"torch.UntypedStorage", "torch._UntypedStorage", "torch.storage.UntypedStorage", "torch.storage._UntypedStorage"} {
		i := strings.LastIndexByte(n, '.')
		add(n[:i], n[i+1:], kindStorageClass, bytesType)
	}
	for _, t := range torchTypes {
		dt := &dtypeInfo{name: "torch." + t.dtype, st: t.st, size: t.size}
		if t.storage != "" {
			add("torch", t.storage, kindStorageClass, dt)
		}
		for _, n := range append([]string{t.dtype}, t.aliases...) {
			add("torch", n, kindDType, dt)
		}
	}
	return m
}()

// findGlobal resolves GLOBAL/STACK_GLOBAL against the allow-list.
func findGlobal(module, name string) (*global, error) {
	if len(module)+len(name) <= maxNameLen {
		if g, ok := allowed[module+"."+name]; ok {
			return g, nil
		}
	}
	return nil, &forbiddenGlobalError{Module: module, Name: name}
}

// storage is one storage record of the archive, identified by its key ("0", "1", ...).
type storage struct {
	key    string
	nbytes int64 // as the pickle declares it: numel of the storage type × its element size
}

// storageRef is the value a persistent id becomes: a storage seen through a storage class.
type storageRef struct {
	st    *storage
	dtype *dtypeInfo
}

// tensorRef is a tensor view as the pickle describes it; it is validated against its
// storage when the tensors are materialised, where its name is known.
type tensorRef struct {
	st     *storage
	dtype  *dtypeInfo
	offset int64 // in elements of dtype
	size   []int64
	stride []int64 // in elements of dtype
}

// env gives torch meaning to persistent ids and to the allow-listed globals.
type env struct {
	storages map[string]*storage
}

func newEnv() *env { return &env{storages: make(map[string]*storage)} }

// persistentLoad turns ('storage', storage class, key, location, numel) into a storageRef.
func (e *env) persistentLoad(pid any) (any, error) {
	t, ok := pid.(tuple)
	if !ok || len(t) != 5 {
		return nil, fmt.Errorf("persistent id is a %s, want a 5-tuple ('storage', class, key, location, numel)", describe(pid))
	}
	if s, _ := t[0].(string); s != "storage" {
		return nil, fmt.Errorf("persistent id of type %s is not supported (want 'storage')", describe(t[0]))
	}
	g, ok := t[1].(*global)
	if !ok || g.kind != kindStorageClass {
		return nil, fmt.Errorf("persistent id names %s, not a storage class", describe(t[1]))
	}
	key, ok := t[2].(string)
	if !ok || key == "" || len(key) > maxNameLen {
		return nil, fmt.Errorf("persistent id has storage key %s", describe(t[2]))
	}
	if _, ok := t[3].(string); !ok {
		return nil, fmt.Errorf("persistent id has location %s, want a str", describe(t[3]))
	}
	numel, ok := t[4].(int64)
	if !ok || numel < 0 || numel > math.MaxInt64/g.dtype.size {
		return nil, fmt.Errorf("persistent id has element count %s", describe(t[4]))
	}
	nbytes := numel * g.dtype.size
	st, ok := e.storages[key]
	if !ok {
		st = &storage{key: key, nbytes: nbytes}
		e.storages[key] = st
	} else if st.nbytes != nbytes {
		return nil, fmt.Errorf("storage %q declared with %d bytes and with %d bytes", clip(key), st.nbytes, nbytes)
	}
	return &storageRef{st: st, dtype: g.dtype}, nil
}

// describe names a value for an error message, with short scalars shown.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return "str " + fmt.Sprintf("%q", clip(v))
	case int64:
		return fmt.Sprintf("int %d", v)
	case tuple:
		return fmt.Sprintf("tuple of %d", len(v))
	}
	return typeName(v)
}

// call performs REDUCE for an allow-listed callable.
func (e *env) call(fn *global, args tuple) (any, error) {
	name := fn.module + "." + fn.name
	nargs := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			if lo == hi {
				return fmt.Errorf("%s takes %d arguments, pickle passes %d", name, lo, len(args))
			}
			return fmt.Errorf("%s takes %d to %d arguments, pickle passes %d", name, lo, hi, len(args))
		}
		return nil
	}
	switch fn.kind {
	case kindOrderedDict:
		if err := nargs(0, 1); err != nil {
			return nil, err
		}
		d := newDict()
		if len(args) == 1 {
			var items []any
			switch a := args[0].(type) {
			case *list:
				items = a.items
			case tuple:
				items = a
			default:
				return nil, fmt.Errorf("%s of a %s is not supported", name, typeName(a))
			}
			for _, it := range items {
				kv, ok := it.(tuple)
				if !ok || len(kv) != 2 {
					return nil, fmt.Errorf("%s item is a %s, want a (key, value) pair", name, describe(it))
				}
				if err := d.set(kv[0], kv[1]); err != nil {
					return nil, err
				}
			}
		}
		return d, nil
	case kindRebuildTensor:
		// _rebuild_tensor(storage, storage_offset, size, stride)
		if err := nargs(4, 4); err != nil {
			return nil, err
		}
		return newTensorRef(name, args[0], args[1], args[2], args[3], nil)
	case kindRebuildTensorV2:
		// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
		// backward_hooks, metadata=None)
		if err := nargs(6, 7); err != nil {
			return nil, err
		}
		if err := checkFlags(name, args[4:]); err != nil {
			return nil, err
		}
		return newTensorRef(name, args[0], args[1], args[2], args[3], nil)
	case kindRebuildTensorV3:
		// _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
		// backward_hooks, dtype, metadata=None)
		if err := nargs(7, 8); err != nil {
			return nil, err
		}
		dt, ok := args[6].(*global)
		if !ok || dt.kind != kindDType {
			return nil, fmt.Errorf("%s dtype argument is a %s, not a torch dtype", name, typeName(args[6]))
		}
		flags := append(tuple{args[4], args[5]}, args[7:]...)
		if err := checkFlags(name, flags); err != nil {
			return nil, err
		}
		return newTensorRef(name, args[0], args[1], args[2], args[3], dt.dtype)
	case kindRebuildParameter, kindRebuildParameterState:
		// _rebuild_parameter(data, requires_grad, backward_hooks)
		// _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state)
		n := 3
		if fn.kind == kindRebuildParameterState {
			n = 4
		}
		if err := nargs(n, n); err != nil {
			return nil, err
		}
		t, ok := args[0].(*tensorRef)
		if !ok {
			return nil, fmt.Errorf("%s data is a %s, not a tensor", name, typeName(args[0]))
		}
		if err := checkFlags(name, args[1:3]); err != nil {
			return nil, err
		}
		return t, nil
	case kindRebuildFromType:
		// _rebuild_from_type_v2(func, new_type, args, state): a tensor (sub)class with
		// Python attributes. The attributes are dropped; only the data matters here.
		if err := nargs(4, 4); err != nil {
			return nil, err
		}
		f, ok := args[0].(*global)
		if !ok || f.kind == kindRebuildFromType || f.kind < kindRebuildTensor || f.kind > kindRebuildParameterState {
			return nil, fmt.Errorf("%s func is %s, not a tensor rebuild function", name, typeName(args[0]))
		}
		cls, ok := args[1].(*global)
		if !ok || (cls.kind != kindTensorClass && cls.kind != kindParameterClass) {
			return nil, fmt.Errorf("%s type is %s; only torch.Tensor and Parameter are supported", name, typeName(args[1]))
		}
		inner, ok := args[2].(tuple)
		if !ok {
			return nil, fmt.Errorf("%s args is a %s, not a tuple", name, typeName(args[2]))
		}
		return e.call(f, inner)
	}
	return nil, fmt.Errorf("calling %s is not supported", name)
}

// checkFlags validates requires_grad, backward_hooks and the optional metadata of a
// rebuild call: a bool followed by dicts or None. Their contents do not matter for
// inference.
func checkFlags(name string, flags tuple) error {
	if _, ok := flags[0].(bool); !ok {
		return fmt.Errorf("%s requires_grad is a %s, not a bool", name, typeName(flags[0]))
	}
	for _, f := range flags[1:] {
		switch f.(type) {
		case nil, *dict:
		default:
			return fmt.Errorf("%s hooks/metadata argument is a %s, not a dict", name, typeName(f))
		}
	}
	return nil
}

// maxDims bounds a tensor's rank (torch's own limit is 64 too).
const maxDims = 64

func newTensorRef(name string, storageArg, offsetArg, sizeArg, strideArg any, dtype *dtypeInfo) (*tensorRef, error) {
	sr, ok := storageArg.(*storageRef)
	if !ok {
		return nil, fmt.Errorf("%s storage is a %s, not a storage", name, typeName(storageArg))
	}
	if dtype == nil {
		dtype = sr.dtype
	}
	offset, ok := offsetArg.(int64)
	if !ok || offset < 0 {
		return nil, fmt.Errorf("%s storage offset is %s", name, describe(offsetArg))
	}
	size, err := intTuple(name+" size", sizeArg)
	if err != nil {
		return nil, err
	}
	stride, err := intTuple(name+" stride", strideArg)
	if err != nil {
		return nil, err
	}
	if len(size) != len(stride) {
		return nil, fmt.Errorf("%s has %d sizes but %d strides", name, len(size), len(stride))
	}
	return &tensorRef{st: sr.st, dtype: dtype, offset: offset, size: size, stride: stride}, nil
}

// intTuple reads a tuple (or list) of non-negative ints.
func intTuple(what string, v any) ([]int64, error) {
	var items []any
	switch v := v.(type) {
	case tuple:
		items = v
	case *list:
		items = v.items
	default:
		return nil, fmt.Errorf("%s is a %s, not a tuple", what, typeName(v))
	}
	if len(items) > maxDims {
		return nil, fmt.Errorf("%s has %d dimensions (limit %d)", what, len(items), maxDims)
	}
	out := make([]int64, len(items))
	for i, it := range items {
		n, ok := it.(int64)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is a %s, not an int", what, i, typeName(it))
		}
		if n < 0 {
			return nil, fmt.Errorf("%s[%d] is negative (%d)", what, i, n)
		}
		out[i] = n
	}
	return out, nil
}

// build performs BUILD. Only dict state on dicts is accepted: a state dict returned by
// nn.Module.state_dict() carries a `_metadata` attribute, which is ignored.
func build(obj, state any) error {
	if _, ok := obj.(*dict); !ok {
		return fmt.Errorf("BUILD on a %s is not supported", typeName(obj))
	}
	okState := func(s any) bool {
		switch s.(type) {
		case nil, *dict:
			return true
		}
		return false
	}
	if t, ok := state.(tuple); ok && len(t) == 2 && okState(t[0]) && okState(t[1]) {
		return nil
	}
	if !okState(state) {
		return fmt.Errorf("BUILD of a dict with a %s state is not supported", typeName(state))
	}
	return nil
}

// namedTensor is one entry of the flattened state dict.
type namedTensor struct {
	name string
	t    *tensorRef
}

// wrapperKeys are the keys under which training checkpoints commonly nest the state dict,
// in order of preference.
var wrapperKeys = []string{"state_dict", "model_state_dict", "model", "module"}

// Limits of the state-dict walk; a memoised dict referenced many times could otherwise
// make it exponential.
const (
	maxDepth      = 32
	maxEntries    = 1 << 18
	maxNamesBytes = 64 << 20
)

// stateDict finds the state dict in the unpickled root and flattens it in order.
//
// Accepted: a dict (or OrderedDict) of name → tensor; nested dicts inside it, whose keys
// are joined with "."; and a dict holding such a state dict under one of wrapperKeys (the
// first present whose value is a dict wins, other entries are ignored), recursively.
// Anything else in the state dict is an error naming the entry.
func stateDict(root any) ([]namedTensor, error) {
	for depth := 0; ; depth++ {
		d, ok := root.(*dict)
		if !ok {
			return nil, fmt.Errorf("checkpoint holds a %s, not a dict of tensors", typeName(root))
		}
		if depth >= maxDepth {
			return nil, fmt.Errorf("state dict nested deeper than %d", maxDepth)
		}
		inner := any(nil)
		for _, k := range wrapperKeys {
			if v, ok := d.get(k); ok {
				if _, isDict := v.(*dict); isDict {
					inner = v
					break
				}
			}
		}
		if inner == nil {
			w := &walker{seen: make(map[string]bool)}
			if err := w.walk(d, "", 0); err != nil {
				return nil, err
			}
			return w.out, nil
		}
		root = inner
	}
}

type walker struct {
	out        []namedTensor
	seen       map[string]bool
	entries    int
	namesBytes int
}

func (w *walker) walk(d *dict, prefix string, depth int) error {
	if depth >= maxDepth {
		return fmt.Errorf("state dict entry %q: dicts nested deeper than %d", clip(prefix), maxDepth)
	}
	for i, kv := range d.keys {
		if w.entries++; w.entries > maxEntries {
			return fmt.Errorf("state dict has more than %d entries", maxEntries)
		}
		k, ok := kv.(string)
		if !ok {
			return fmt.Errorf("state dict key %s under %q is not a str", describe(kv), clip(prefix))
		}
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		if w.namesBytes += len(name); w.namesBytes > maxNamesBytes {
			return fmt.Errorf("state dict names exceed %d bytes", maxNamesBytes)
		}
		switch v := d.vals[i].(type) {
		case *tensorRef:
			if w.seen[name] {
				return fmt.Errorf("state dict has two entries named %q", clip(name))
			}
			w.seen[name] = true
			w.out = append(w.out, namedTensor{name: name, t: v})
		case *dict:
			if err := w.walk(v, name, depth+1); err != nil {
				return err
			}
		default:
			return fmt.Errorf("state dict entry %q is a %s, not a tensor (a checkpoint may nest its state dict under one of the keys %s)",
				clip(name), typeName(v), strings.Join(wrapperKeys, ", "))
		}
	}
	return nil
}

// plan is one tensor's validated view of its storage.
type plan struct {
	name       string
	dtype      DType
	shape      []int
	size       []int64
	stride     []int64
	es         int64 // element size
	offset     int64 // first element, in elements
	nbytes     int64 // bytes of the materialised tensor
	lo, hi     int64 // byte extent in the storage (lo == hi when empty)
	contiguous bool
}

// makePlan validates a tensor's view against its storage. All arithmetic is checked for
// overflow; strides were already checked to be non-negative.
func makePlan(name string, t *tensorRef) (plan, error) {
	p := plan{name: name, size: t.size, stride: t.stride, offset: t.offset}
	if t.dtype.st == "" {
		return p, fmt.Errorf("tensor %q: dtype %s is not supported (supported: float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, bool)", clip(name), t.dtype.name)
	}
	p.dtype, p.es = t.dtype.st, t.dtype.size
	p.shape = make([]int, len(t.size))
	numel := int64(1)
	for i, d := range t.size {
		if d > math.MaxInt32 {
			return p, fmt.Errorf("tensor %q: dimension %d is too large", clip(name), d)
		}
		p.shape[i] = int(d)
		if d != 0 && numel > math.MaxInt64/p.es/d {
			return p, fmt.Errorf("tensor %q: shape %v overflows", clip(name), t.size)
		}
		numel *= d
	}
	p.nbytes = numel * p.es
	p.contiguous = true
	want := int64(1)
	for i := len(t.size) - 1; i >= 0; i-- {
		if t.size[i] != 1 && t.stride[i] != want {
			p.contiguous = false
		}
		want *= t.size[i]
	}
	if numel == 0 {
		p.contiguous = true
		return p, nil
	}
	// The largest element index is offset + Σ (size_i - 1) · stride_i.
	last := t.offset
	for i, d := range t.size {
		s := t.stride[i]
		if s != 0 && d-1 > (math.MaxInt64-last)/s {
			return p, fmt.Errorf("tensor %q: view (offset %d, size %v, stride %v) overflows", clip(name), t.offset, t.size, t.stride)
		}
		last += (d - 1) * s
	}
	if last >= t.st.nbytes/p.es {
		return p, fmt.Errorf("tensor %q: view (offset %d, size %v, stride %v) of %s needs %d elements, storage %q holds %d bytes",
			clip(name), t.offset, t.size, t.stride, t.dtype.name, last+1, clip(t.st.key), t.st.nbytes)
	}
	p.lo, p.hi = t.offset*p.es, (last+1)*p.es
	return p, nil
}

// gather copies the view described by p from window, which holds the storage bytes
// starting at byte base, into dst in row-major order.
func gather(dst, window []byte, base int64, p *plan) {
	es := p.es
	n := len(p.size)
	if n == 0 {
		o := p.offset*es - base
		copy(dst, window[o:o+es])
		return
	}
	if p.contiguous {
		o := p.offset*es - base
		copy(dst, window[o:o+int64(len(dst))])
		return
	}
	// Copy along the innermost dimension, stepping an odometer over the outer ones.
	inner := p.size[n-1]
	innerStride := p.stride[n-1]
	idx := make([]int64, n-1)
	pos := p.offset // element index of the current row start
	w := 0
	for {
		if innerStride == 1 {
			o := pos*es - base
			w += copy(dst[w:], window[o:o+inner*es])
		} else {
			for j := int64(0); j < inner; j++ {
				o := (pos+j*innerStride)*es - base
				w += copy(dst[w:], window[o:o+es])
			}
		}
		d := n - 2
		for ; d >= 0; d-- {
			idx[d]++
			pos += p.stride[d]
			if idx[d] < p.size[d] {
				break
			}
			pos -= idx[d] * p.stride[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// storageOrder groups plan indices by storage, in order of first use.
func storageOrder(entries []namedTensor) (keys []string, groups map[string][]int) {
	groups = make(map[string][]int)
	for i, e := range entries {
		k := e.t.st.key
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	return keys, groups
}
