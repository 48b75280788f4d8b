package zh

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMOSSOptions checks what MOSS-TTS-Nano's options change against the
// upstream defaults: interjections, erhua and full-width text are kept.
func TestMOSSOptions(t *testing.T) {
	n := New()
	for _, c := range []struct{ in, want string }{
		// remove_erhua=False: 儿 stays (upstream default drops it).
		{"这儿有只鸟儿", "这儿有只鸟儿"},
		{"我儿子喜欢这地儿", "我儿子喜欢这地儿"},
		{"儿", "儿"},
		// remove_interjections=False.
		{"呃这个呃啊我不知道", "呃这个呃啊我不知道"},
		// full_to_half=False: full-width letters and punctuation stay, but
		// full-width digits are still read as numbers.
		{"苹果宣布发布新ＩＰＨＯＮＥ", "苹果宣布发布新ＩＰＨＯＮＥ"},
		{"他说：“我们已经吃过了！”。", "他说：“我们已经吃过了！”。"},
		{"仅仅是２０１５年", "仅仅是二零一五年"},
		// traditional_to_simple stays on; tag_oov stays off.
		{"寶貝", "宝贝"},
		{"我们안녕", "我们안녕"},
		{"", ""},
	} {
		if got := n.Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestRegression pins readings that follow from the upstream grammar but are
// not in its test files; they guard the port against accidental changes.
func TestRegression(t *testing.T) {
	n := New()
	for _, c := range []struct{ in, want string }{
		{"2024年5月1日，气温-3°C到5°C。", "二零二四年五月一日，气温负三摄氏度到五摄氏度。"},
		{"他花了1,000元买了2个苹果", "他花了一千元买了两个苹果"}, // measure strips thousands commas; 2个 → 两个
		{"1-2月", "一到二月"},   // measure: 到两月 at the end → 到二月
		{"2两", "二两"},       // measure: 两两 at the start → 二两
		{"10.15", "十月十五日"}, // date mm.dd beats the decimal (weight 1.02 < 90)
		{"约200人", "约两百人"},  // cardinal: 二百 → 两百 after 约
		{"22000", "两万二千"},  // only the leading 二万 becomes 两万
		{"2200000", "两百二十万"},
		{"-200", "负二百"}, // after a sign there is no 两
		{"海淀区108号", "海淀区一百零八号"},
		{"电话：010-12345678", "电话：零一零一二三四五六七八"},
		{"3:00-5:00 pm", "三点到下午五点"},
		{"2008-08-08~2008-09-01", "二零零八年八月八日到二零零八年九月一日"},
		{"1+1+1+1=4", "一加一加一加一等于四"},
		{"O2O模式", "O to O模式"},
		{"2/3的人", "三分之二的人"},
		{"5~10个", "五到十个"},
		{"Hello world 123", "Hello world 一百二十三"},
		{"2020-2021赛季", "二零二零到二零二一赛季"},
		{"中国3:2韩国", "中国三比二韩国"},
		{"x=-2", "x=负二"},
		{"于5:35:36 发射", "于五点三十五分三十六秒发射"}, // time eats one trailing space
		{"1.5亿", "一点五亿"},
		{"3kw", "三千瓦"},
		{"1km", "一公里"}, // units_en km (weight 0) beats k+m (0.1)
		{"\xff1", "\ufffd一"},
	} {
		if got := n.Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestPathological checks that huge digit and punctuation runs are handled
// (the parse is linear, so these finish quickly) and stay well formed.
func TestPathological(t *testing.T) {
	k := 2000 // runs of ~20k characters; 100k with NANOVOX_LONG_TESTS
	if os.Getenv("NANOVOX_LONG_TESTS") != "" {
		k = 10000
	}
	n := New()
	for name, in := range map[string]string{
		"digits":      strings.Repeat("1234567890", k),
		"decimal":     "3." + strings.Repeat("1415926535", k),
		"ip-like":     strings.Repeat("1.", 5*k),
		"math-chain":  strings.Repeat("1+", 5*k) + "1",
		"punctuation": strings.Repeat("！？。，、…", 2*k),
		"dash-run":    strings.Repeat("-", 10*k),
		"hyphens":     strings.Repeat("12-", 3*k),
		"commas":      "1" + strings.Repeat(",000", 2*k) + "kg",
	} {
		out := n.Normalize(in)
		if !utf8.ValidString(out) || out == "" {
			t.Errorf("%s: invalid or empty output", name)
		}
		if len(out) > 16*len(in)+64 {
			t.Errorf("%s: output %d bytes for %d input bytes", name, len(out), len(in))
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"", "2008-08-08", "价格是￥13.5", "10km/h", "13501234567", "1:02:36 am", "1,000.5kg",
		"尾号是1234", "127.0.0.1", "-1+2=1", "±2%", "儿", "2020-2021赛季", "拉齐奥 2/2",
		"\xff\xfe", "1.", ".1", "1..1", "约人均", "9999999999999", "0000", "1-", "--1",
		"约2008-08-08", "人均2024-05-06发布", "约8:30", "约2008/08/08",
	} {
		f.Add(s)
	}
	n := New()
	f.Fuzz(func(t *testing.T, s string) {
		out := n.Normalize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Normalize(%q) = %q: invalid UTF-8", s, out)
		}
		if len(out) > 16*len(s)+64 {
			t.Fatalf("Normalize(%q): %d bytes out for %d in", s, len(out), len(s))
		}
		if again := n.Normalize(s); again != out {
			t.Fatalf("Normalize(%q) not deterministic: %q then %q", s, out, again)
		}
	})
}

// TestConcurrent runs one Normalizer from several goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	o := UpstreamDefaults()
	o.TagOOV = true // the OOV charset is loaded lazily: exercise that too
	n := NewWithOptions(o)
	want := n.Normalize(benchSentence + "雪の花")
	done := make(chan string)
	for g := 0; g < 4; g++ {
		go func() { done <- NewWithOptions(o).Normalize(benchSentence + "雪の花") }()
	}
	for g := 0; g < 4; g++ {
		if got := <-done; got != want {
			t.Errorf("concurrent Normalize = %q; want %q", got, want)
		}
	}
}
