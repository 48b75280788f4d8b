package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const manifestDir = "kubernetes"

// kustomization is the part of kustomize's Kustomization these manifests
// use; decoding rejects any other field, so a field this test does not
// know fails it instead of passing unchecked.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors"`
		IncludeTemplates bool              `json:"includeTemplates"`
	} `json:"labels,omitempty"`
	Resources []string `json:"resources,omitempty"`
	Images    []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
	Patches []struct {
		Path   string `json:"path"`
		Target struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"target"`
	} `json:"patches,omitempty"`
}

// newObject returns the typed object of a manifest's apiVersion and kind.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + " " + kind {
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1 Secret":
		return &corev1.Secret{}, nil
	case "v1 Service":
		return &corev1.Service{}, nil
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, nil
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, nil
	case "monitoring.coreos.com/v1 ServiceMonitor":
		return &monitoringv1.ServiceMonitor{}, nil
	case "kustomize.config.k8s.io/v1beta1 Kustomization":
		return &kustomization{}, nil
	}
	return nil, fmt.Errorf("apiVersion %q kind %q: not a type this test knows", apiVersion, kind)
}

// manifest is one YAML document decoded into its type.
type manifest struct {
	file string // relative to manifestDir
	obj  any
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// decodeStrict decodes one YAML document into its typed object: unknown or
// duplicate fields are errors, and every field of the document must come
// back when the object is encoded again (encoding/json matches names
// case-insensitively; Kubernetes does not).
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	obj, err := newObject(tm.APIVersion, tm.Kind)
	if err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, err
	}
	var orig, back any
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(j, &orig); err != nil {
		return nil, err
	}
	bj, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(bj, &back); err != nil {
		return nil, err
	}
	if p := missing(orig, back, ""); p != "" {
		return nil, fmt.Errorf("%s does not survive decoding into %T (misspelt or wrong type)", p, obj)
	}
	return obj, nil
}

// missing returns the path of a value in want that got lacks, or "".
func missing(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range w {
			if p := missing(v, g[k], path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if p := missing(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	default:
		// Quantities and int-or-strings may change spelling ("2" stays
		// "2", 0440 is 288 either way); compare as JSON.
		if fmt.Sprint(want) != fmt.Sprint(got) && !(want == nil && got == nil) {
			return path
		}
	}
	return ""
}

// readManifests decodes every YAML document under manifestDir.
func readManifests(t *testing.T) []manifest {
	t.Helper()
	var out []manifest
	err := filepath.WalkDir(manifestDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(manifestDir, p)
		for i, doc := range docSep.Split(string(b), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			obj, err := decodeStrict([]byte(doc))
			if err != nil {
				t.Errorf("%s, document %d: %v", rel, i+1, err)
				continue
			}
			out = append(out, manifest{file: rel, obj: obj})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no manifests")
	}
	return out
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// base is the base kustomization's objects, by kind.
type base struct {
	deploy  *appsv1.Deployment
	svc     *corev1.Service
	pdb     *policyv1.PodDisruptionBudget
	hpa     *autoscalingv2.HorizontalPodAutoscaler
	sm      *monitoringv1.ServiceMonitor
	cm      *corev1.ConfigMap
	secrets []*corev1.Secret
}

func readBase(t *testing.T) (base, []manifest) {
	t.Helper()
	all := readManifests(t)
	var b base
	for _, m := range all {
		if filepath.Dir(m.file) != "base" {
			continue // overlays
		}
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			b.deploy = o
		case *corev1.Service:
			b.svc = o
		case *policyv1.PodDisruptionBudget:
			b.pdb = o
		case *autoscalingv2.HorizontalPodAutoscaler:
			b.hpa = o
		case *monitoringv1.ServiceMonitor:
			b.sm = o
		case *corev1.ConfigMap:
			b.cm = o
		case *corev1.Secret:
			b.secrets = append(b.secrets, o)
		}
	}
	if b.deploy == nil || b.svc == nil || b.pdb == nil || b.hpa == nil || b.sm == nil || b.cm == nil {
		t.Fatalf("the base lacks a kind: %+v", b)
	}
	return b, all
}

// container returns the pod's container or init container of that name.
func container(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	t.Fatalf("no container %q", name)
	return nil
}

// TestManifestsDecode decodes every manifest into its Kubernetes type with
// unknown fields rejected, and checks that the kustomizations name every
// file there is and only files there are.
func TestManifestsDecode(t *testing.T) {
	all := readManifests(t)
	listed := map[string]bool{}
	for _, m := range all {
		k, ok := m.obj.(*kustomization)
		if !ok {
			continue
		}
		dir := filepath.Dir(m.file)
		if k.Kind != "Kustomization" {
			t.Errorf("%s: kind %s", m.file, k.Kind)
		}
		var refs []string
		refs = append(refs, k.Resources...)
		for _, p := range k.Patches {
			refs = append(refs, p.Path)
		}
		for _, r := range refs {
			p := filepath.Join(manifestDir, dir, r)
			fi, err := os.Stat(p)
			if err != nil {
				t.Errorf("%s: %v", m.file, err)
				continue
			}
			if fi.IsDir() {
				if _, err := os.Stat(filepath.Join(p, "kustomization.yaml")); err != nil {
					t.Errorf("%s: %s is a directory without a kustomization.yaml", m.file, r)
				}
				continue
			}
			rel, _ := filepath.Rel(manifestDir, p)
			listed[rel] = true
		}
	}
	for _, m := range all {
		if _, ok := m.obj.(*kustomization); ok || listed[m.file] || strings.HasSuffix(m.file, ".example.yaml") {
			continue
		}
		t.Errorf("%s is in no kustomization (name example files *.example.yaml)", m.file)
	}
}

// TestManifestsWiring checks that the objects refer to each other: labels
// and selectors, ports by name, the HPA's target, the Secrets and
// ConfigMap keys the pod reads, and the image's user and port.
func TestManifestsWiring(t *testing.T) {
	b, _ := readBase(t)
	pod := &b.deploy.Spec.Template
	podLabels := labels.Set(pod.Labels)
	sel := func(what string, ls *metav1.LabelSelector) {
		s, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil || s.Empty() || !s.Matches(podLabels) {
			t.Errorf("%s selector %v does not select the pods (%v): %v", what, ls, pod.Labels, err)
		}
	}
	sel("Deployment", b.deploy.Spec.Selector)
	sel("PodDisruptionBudget", b.pdb.Spec.Selector)
	if s := labels.SelectorFromSet(b.svc.Spec.Selector); len(b.svc.Spec.Selector) == 0 || !s.Matches(podLabels) {
		t.Errorf("Service selector %v does not select the pods (%v)", b.svc.Spec.Selector, pod.Labels)
	}
	smSel, err := metav1.LabelSelectorAsSelector(&b.sm.Spec.Selector)
	if err != nil || !smSel.Matches(labels.Set(b.svc.Labels)) {
		t.Errorf("ServiceMonitor selector %v does not select the Service (%v)", b.sm.Spec.Selector, b.svc.Labels)
	}
	if r := b.hpa.Spec.ScaleTargetRef; r.Kind != "Deployment" || r.Name != b.deploy.Name || r.APIVersion != "apps/v1" {
		t.Errorf("HPA targets %+v, not the Deployment %s", r, b.deploy.Name)
	}
	if *b.hpa.Spec.MinReplicas < 2 || b.hpa.Spec.MaxReplicas < *b.hpa.Spec.MinReplicas {
		t.Errorf("HPA replicas %d–%d: want at least 2 (the PDB lets one go)", *b.hpa.Spec.MinReplicas, b.hpa.Spec.MaxReplicas)
	}

	c := container(t, &pod.Spec, "nanovox")
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != Port || c.Ports[0].Name != "http" {
		t.Errorf("container ports %+v, want http on the image's port %d", c.Ports, Port)
	}
	if len(b.svc.Spec.Ports) != 1 || b.svc.Spec.Ports[0].TargetPort.String() != c.Ports[0].Name {
		t.Errorf("Service ports %+v do not target the container's port %q", b.svc.Spec.Ports, c.Ports[0].Name)
	}
	if len(b.sm.Spec.Endpoints) != 1 || b.sm.Spec.Endpoints[0].Port != b.svc.Spec.Ports[0].Name {
		t.Errorf("ServiceMonitor endpoints %+v do not name the Service's port %q", b.sm.Spec.Endpoints, b.svc.Spec.Ports[0].Name)
	}
	for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.String() != c.Ports[0].Name {
			t.Errorf("probe %+v: want an HTTP GET on port %q", p, c.Ports[0].Name)
		}
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("readiness %s, liveness %s: want /readyz (503 while draining) and /healthz", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}

	// The image's user: runAsNonRoot checks the numeric uid.
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != UID || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and runAsUser %d", sc, UID)
	}
	// A read-only root needs writable mounts where the server writes.
	mounts := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = !m.ReadOnly
	}
	if c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem {
		for _, p := range []string{"/tmp", DataDir} {
			if !mounts[p] {
				t.Errorf("read-only root filesystem without a writable volume at %s", p)
			}
		}
	}

	// Every ConfigMap and Secret key the pod reads exists (optional ones
	// excepted) in the ConfigMap or the example Secrets.
	all := readManifests(t)
	secretKeys := map[string]map[string]bool{}
	for _, m := range all {
		if s, ok := m.obj.(*corev1.Secret); ok {
			secretKeys[s.Name] = map[string]bool{}
			for k := range s.StringData {
				secretKeys[s.Name][k] = true
			}
		}
	}
	for _, ct := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, e := range ct.Env {
			vf := e.ValueFrom
			switch {
			case vf == nil:
			case vf.ConfigMapKeyRef != nil:
				r := vf.ConfigMapKeyRef
				if _, ok := b.cm.Data[r.Key]; r.Name != b.cm.Name || !ok {
					t.Errorf("%s: env %s reads ConfigMap %s key %s, which the ConfigMap does not have", ct.Name, e.Name, r.Name, r.Key)
				}
			case vf.SecretKeyRef != nil:
				r := vf.SecretKeyRef
				if !secretKeys[r.Name][r.Key] {
					t.Errorf("%s: env %s reads Secret %s key %s, which secrets.example.yaml does not show", ct.Name, e.Name, r.Name, r.Key)
				}
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && secretKeys[v.Secret.SecretName] == nil {
			t.Errorf("volume %s mounts Secret %s, which secrets.example.yaml does not show", v.Name, v.Secret.SecretName)
		}
	}
	// The S3 settings the voice store reads from the standard AWS chain.
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL"} {
		if !env[k] {
			t.Errorf("container sets no %s", k)
		}
	}
	if !strings.HasPrefix(b.cm.Data["NANOVOX_VOICES"], "s3://") {
		t.Errorf("ConfigMap NANOVOX_VOICES %q: want s3://BUCKET/PREFIX", b.cm.Data["NANOVOX_VOICES"])
	}
}

// flagValue returns the value of --name=V or --name V in args, and whether
// it is there.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// TestManifestsShutdown checks that the pod's grace period covers the
// preStop sleep, serve's --drain-grace and its --shutdown-timeout.
func TestManifestsShutdown(t *testing.T) {
	b, _ := readBase(t)
	pod := b.deploy.Spec.Template.Spec
	c := container(t, &pod, "nanovox")
	var pre int64
	if l := c.Lifecycle; l != nil && l.PreStop != nil {
		if l.PreStop.Sleep == nil || l.PreStop.Exec != nil || l.PreStop.HTTPGet != nil {
			t.Errorf("preStop %+v: the image has no shell; use the kubelet's sleep action", l.PreStop)
		}
		if l.PreStop.Sleep != nil {
			pre = l.PreStop.Sleep.Seconds
		}
	}
	dur := func(name string) time.Duration {
		v, ok := flagValue(c.Args, name)
		if !ok {
			t.Fatalf("serve's args do not set --%s", name)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("--%s=%s: %v", name, v, err)
		}
		return d
	}
	drain, shutdown := dur("drain-grace"), dur("shutdown-timeout")
	need := time.Duration(pre)*time.Second + drain + shutdown
	grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	if grace < need || grace > need+30*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v; preStop %ds + --drain-grace %v + --shutdown-timeout %v = %v: want that plus at most 30 s to exit", grace, pre, drain, shutdown, need)
	}
	if drain <= 0 {
		t.Error("--drain-grace 0: load balancers outside the cluster (nginx, haproxy) never see /readyz fail before the listener closes")
	}
}

var helpFlag = regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?--([a-z0-9][a-z0-9-]*)`)

// helpFlags returns the flags `nanovox CMD --help` lists.
func helpFlags(t *testing.T, bin, cmd string) map[string]bool {
	t.Helper()
	out, err := exec.Command(bin, cmd, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s --help: %v\n%s", bin, cmd, err, out)
	}
	fl := map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(string(out), -1) {
		fl[m[1]] = true
	}
	if !fl["help"] {
		t.Fatalf("%s --help lists no --help flag; the parser is wrong:\n%s", cmd, out)
	}
	return fl
}

// subcommand returns the nanovox command a container runs and its
// arguments after it, from the container's command (or the image's
// entrypoint) and args.
func subcommand(t *testing.T, c *corev1.Container) (string, []string) {
	t.Helper()
	argv := append(append([]string{}, c.Command...), c.Args...)
	if len(c.Command) == 0 {
		argv = append(append([]string{}, Entrypoint...), c.Args...)
	}
	if len(argv) < 2 || argv[0] != Binary {
		t.Fatalf("%s runs %q, not %s", c.Name, argv, Binary)
	}
	return argv[1], argv[2:]
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// TestManifestsFlags checks every flag the containers pass, and every
// NANOVOX_* variable they set, against the flags of the binary.
func TestManifestsFlags(t *testing.T) {
	bin := needBinary(t)
	b, _ := readBase(t)
	pod := b.deploy.Spec.Template.Spec
	cache := map[string]map[string]bool{}
	for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
		cmd, args := subcommand(t, &c)
		if cache[cmd] == nil {
			cache[cmd] = helpFlags(t, bin, cmd)
		}
		flags := cache[cmd]
		env := map[string]bool{}
		for _, e := range c.Env {
			env[e.Name] = true
			if n, ok := strings.CutPrefix(e.Name, "NANOVOX_"); ok && cmd == "serve" {
				if f := strings.ToLower(strings.ReplaceAll(n, "_", "-")); !flags[f] {
					t.Errorf("%s: env %s names no flag of nanovox %s (--%s)", c.Name, e.Name, cmd, f)
				}
			}
		}
		for _, a := range args {
			if !strings.HasPrefix(a, "--") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !flags[name] {
				t.Errorf("%s: nanovox %s has no flag --%s", c.Name, cmd, name)
			}
			// Kubernetes leaves $(VAR) as it is when VAR is not defined.
			for _, m := range varRef.FindAllStringSubmatch(a, -1) {
				if !env[m[1]] {
					t.Errorf("%s: %s refers to $(%s), which the container does not define", c.Name, a, m[1])
				}
			}
		}
	}
}

// TestManifestsServe runs serve as the Deployment does — its args and
// environment, the image's environment — on the tiny test model, probes it
// where the kubelet would, reads the metrics the HPA overlay and the
// ServiceMonitor use, then sends SIGTERM and watches it drain and exit in
// the grace period. The S3 voice store is replaced by a directory (its
// own tests run a real S3 server).
func TestManifestsServe(t *testing.T) {
	bin := needBinary(t)
	b, all := readBase(t)
	pod := b.deploy.Spec.Template.Spec
	c := container(t, &pod, "nanovox")
	cmd, args := subcommand(t, c)
	if cmd != "serve" {
		t.Fatalf("the server container runs %q", cmd)
	}
	tmp := t.TempDir()
	keyFile := filepath.Join(tmp, "api-key")
	if err := os.WriteFile(keyFile, []byte("test-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var run []string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--voices"):
			a = "--data-dir=" + filepath.Join(tmp, "voices")
		case strings.HasPrefix(a, "--api-key-file"):
			a = "--api-key-file=" + keyFile
		}
		run = append(run, a)
	}
	run = append(run, "--model", filepath.Join(repoRoot, "testdata/tiny-a/lm"), "--codec", filepath.Join(repoRoot, "testdata/tiny-a/codec"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var env []string
	for _, e := range Env {
		if !strings.HasPrefix(e, "NANOVOX_ADDR=") {
			env = append(env, e)
		}
	}
	env = append(env, "NANOVOX_ADDR="+addr, "HOME="+tmp, "NANOVOX_DATA_DIR="+tmp)
	for _, e := range c.Env {
		if e.ValueFrom == nil && e.Name != "HF_HUB_CACHE" {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	env = append(env, "HF_HUB_CACHE="+filepath.Join(tmp, "hub"), "GOMEMLIMIT="+strconv.FormatInt(c.Resources.Limits.Memory().Value(), 10)) // resourceFieldRef gives bytes
	var stderr bytes.Buffer
	p := exec.Command(bin, append([]string{"serve"}, run...)...)
	p.Env, p.Stderr = env, &stderr
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed when serve has exited, with waitErr set.
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = p.Wait(); close(exited) }()
	defer func() {
		p.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("serve's log:\n%s", stderr.String())
		}
	}()

	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string) (int, string) {
		r, err := client.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer r.Body.Close()
		var body bytes.Buffer
		body.ReadFrom(r.Body)
		return r.StatusCode, body.String()
	}
	// The startup probe's budget, polled faster.
	sp := c.StartupProbe
	deadline := time.Now().Add(time.Duration(sp.PeriodSeconds*sp.FailureThreshold) * time.Second)
	for {
		if code, _ := get(sp.HTTPGet.Path); code == http.StatusOK {
			break
		}
		select {
		case <-exited:
			t.Fatalf("serve exited before answering its startup probe: %v", waitErr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 200 from %s within the startup probe's %v", sp.HTTPGet.Path, time.Until(deadline))
		}
	}
	for _, pr := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if code, body := get(pr.HTTPGet.Path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", pr.HTTPGet.Path, code, body)
		}
	}
	code, metrics := get(b.sm.Spec.Endpoints[0].Path)
	if code != http.StatusOK {
		t.Fatalf("GET %s (ServiceMonitor): %d", b.sm.Spec.Endpoints[0].Path, code)
	}
	for _, m := range all {
		hpa, ok := m.obj.(*autoscalingv2.HorizontalPodAutoscaler)
		if !ok {
			continue
		}
		for _, ms := range hpa.Spec.Metrics {
			if ms.Pods != nil && !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(ms.Pods.Metric.Name)+`[ {]`).MatchString(metrics) {
				t.Errorf("%s: the HPA scales on %s, which /metrics does not export", m.file, ms.Pods.Metric.Name)
			}
		}
	}
	// The API key file the Secret provides is in force.
	if code, _ := get("/v1/audio/voices"); code != http.StatusUnauthorized {
		t.Errorf("GET /v1/audio/voices without the key: %d, want 401 (--api-key-file not applied?)", code)
	}

	// Termination as the kubelet does it after preStop: SIGTERM, then the
	// readiness probe must fail (draining) and the process exit 0 before
	// the grace period would SIGKILL it.
	start := time.Now()
	if err := p.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	drained := false
	for !drained && time.Since(start) < 5*time.Second {
		code, body := get(c.ReadinessProbe.HTTPGet.Path)
		drained = code == http.StatusServiceUnavailable && strings.Contains(body, "draining")
		time.Sleep(20 * time.Millisecond)
	}
	if !drained {
		t.Error("readiness probe did not report draining after SIGTERM")
	}
	grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("serve exited with %v after SIGTERM", waitErr)
		}
	case <-time.After(grace):
		t.Errorf("serve still running %v after SIGTERM", grace)
	}
}

// TestMissing checks the round-trip comparison that catches misspelt
// fields encoding/json would accept.
func TestMissing(t *testing.T) {
	if _, err := decodeStrict([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  Type: ClusterIP\n")); err == nil {
		t.Error("a field in the wrong case was accepted")
	}
	if _, err := decodeStrict([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  typo: 1\n")); err == nil {
		t.Error("an unknown field was accepted")
	}
	if _, err := decodeStrict([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nmetadata: {name: y}\n")); err == nil {
		t.Error("a duplicate key was accepted")
	}
	if _, err := decodeStrict([]byte("apiVersion: v9\nkind: Thing\n")); err == nil {
		t.Error("an unknown kind was accepted")
	}
	if _, err := decodeStrict([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: [{port: 80, targetPort: http}]\n")); err != nil {
		t.Errorf("a valid Service: %v", err)
	}
}

// TestKustomizeBuild renders every kustomization with kustomize's own
// library, as kubectl apply -k does, and decodes what it renders as strictly
// as the source files: the objects a cluster receives, with the image set
// and the overlays' patches applied.
func TestKustomizeBuild(t *testing.T) {
	dirs := []string{"base"}
	overlays, err := os.ReadDir(filepath.Join(manifestDir, "overlays"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range overlays {
		dirs = append(dirs, filepath.Join("overlays", o.Name()))
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
			res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(manifestDir, dir))
			if err != nil {
				t.Fatalf("kustomize build %s: %v", dir, err)
			}
			kinds := map[string]int{}
			for _, r := range res.Resources() {
				y, err := r.AsYAML()
				if err != nil {
					t.Fatal(err)
				}
				obj, err := decodeStrict(y)
				if err != nil {
					t.Errorf("%s %s: %v", r.GetKind(), r.GetName(), err)
					continue
				}
				kinds[r.GetKind()]++
				switch o := obj.(type) {
				case *appsv1.Deployment:
					for _, c := range append(o.Spec.Template.Spec.InitContainers, o.Spec.Template.Spec.Containers...) {
						if c.Image == "nanovox" {
							t.Errorf("%s: container %s keeps the placeholder image name; the kustomization's images entry did not apply", dir, c.Name)
						}
					}
				case *autoscalingv2.HorizontalPodAutoscaler:
					if len(o.Spec.Metrics) == 0 || o.Spec.Metrics[0].Resource == nil || o.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
						t.Errorf("%s: the HPA's first metric is not CPU: %+v", dir, o.Spec.Metrics)
					}
					if dir == "overlays/active-streams" && (len(o.Spec.Metrics) != 2 || o.Spec.Metrics[1].Pods == nil) {
						t.Errorf("%s: HPA metrics %+v, want CPU and nanovox_active_streams", dir, o.Spec.Metrics)
					}
				}
			}
			for _, kind := range []string{"Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "ConfigMap", "ServiceMonitor"} {
				if kinds[kind] != 1 {
					t.Errorf("%s renders %d %s objects, want 1", dir, kinds[kind], kind)
				}
			}
			if kinds["Secret"] != 0 {
				t.Errorf("%s renders Secrets: credentials must not come from the repository", dir)
			}
		})
	}
}
