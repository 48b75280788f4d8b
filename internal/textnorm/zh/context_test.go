package zh

import (
	"slices"
	"strings"
	"testing"
)

// contextCases are realistic readings of dates, times, money, percentages,
// measures, fractions, phone numbers, scores, ranges, signs, decimals,
// ordinals and years, alone and after Chinese text, punctuation and Latin
// words. Each want follows from the v1.2.0 grammar and weights; ties lists
// the other readings that cost exactly as much (nil: the cheapest tagging
// has a single reading, so upstream must say the same). Where a tie exists,
// upstream's pick depends on the arc order of its compiled FST, which the
// grammar does not fix (see "Ties" in the package doc); want is the port's
// pick.
//
// Every row was also run through upstream's 2023 compiled tagger (commit
// 5fff826) with testdata/fstcheck: it agrees except on the ties and on rows
// that a rule changed since then touches, which the notes point out.
var contextCases = []struct {
	in, want string
	ties     []string
}{
	// Dates read the same at the start, after Chinese text, punctuation
	// and Latin words: a char token (weight 100) and then the date (1.02).
	{"2008-08-08", "二零零八年八月八日", nil},
	{"2024-05-06发布", "二零二四年五月六日发布", nil},
	{"新版本于2024-05-06发布", "新版本于二零二四年五月六日发布", nil},
	{"于2008-08-08", "于二零零八年八月八日", nil},
	{"发布日期：2024-05-06。", "发布日期：二零二四年五月六日。", nil},
	{"（2008-08-08）", "（二零零八年八月八日）", nil},
	{"2008-08-08（周五）", "二零零八年八月八日（周五）", nil},
	{"Released on 2024-05-06", "Released on 二零二四年五月六日", nil},
	{"会议定于2024/05/06召开", "会议定于二零二四年五月六日召开", nil},
	{"2024.5.6那天下雨了", "二零二四年五月六日那天下雨了", nil},
	{"截止到05-06", "截止到五月六日", nil},
	{"2008-08-08~2008-08-24", "二零零八年八月八日到二零零八年八月二十四日", nil},
	{"时间：2024-05-06 14:30", "时间：二零二四年五月六日 十四点三十分", nil},
	{"2024-05-06 14:30:00", "二零二四年五月六日 十四点三十分", nil},
	{"约为2008-08-08", "约为二零零八年八月八日", nil},
	{"约 2008-08-08", "约 二零零八年八月八日", nil},

	// 约 and 人均 directly before a number are part of cardinal.number
	// (accep("约").ques + accep("人均").ques + number), so a math token
	// "约N" (weight 90) can cover them, 10 less than char(约) (100). Any
	// reading of the rest by one rule token (about 1) then beats char(约)
	// plus the date: math(约2) + cardinal xxxx-xxx-xxx "008-08-08" costs
	// 90 + 1.06 = 91.06 < 100 + 1.02 = 101.02. The hyphens vanish because
	// that cardinal form deletes them. The split point is a three-way tie
	// (约2|008, 约20|08, 约200|8 all cost 91.06); upstream's 2023 FST picks
	// 约两百八零八零八.
	{"约2008-08-08", "约二零零八零八零八", []string{"约两百八零八零八", "约二十零八零八零八"}},
	{"约2024-05-06发布", "约二零二四零五零六发布", []string{"约两百零二四零五零六发布", "约二十二四零五零六发布"}},
	{"大约2008-08-08", "大约二零零八零八零八", []string{"大约两百八零八零八", "大约二十零八零八零八"}},
	{"约3000-01-01", "约三零零零零一零一", []string{"约三十零零零一零一", "约三百零零一零一"}},
	// v1.2.0 added 人均 (the 2023 FST still reads the date here).
	{"人均2008-08-08", "人均二零零八零八零八", []string{"人均两百八零八零八", "人均二十零八零八零八"}},
	// A sign is part of the number too (sign.ques); 二百 keeps 二 after
	// it, as the [BOS] rewrite to 两百 no longer sees the number's start.
	{"-2008-08-08", "负二零零八零八零八", []string{"负二十零八零八零八", "负二百八零八零八"}},
	{"+2008-08-08", "正二零零八零八零八", []string{"正二十零八零八零八", "正二百八零八零八"}},
	{"±2008-08-08", "正负二零零八零八零八", []string{"正负二十零八零八零八", "正负二百八零八零八"}},
	// math(约20) 90 + date mm-dd "08-08" 1.02.
	{"约2008-08", "约二十八月八日", nil},
	// No cheap token reads "08-08" after 约0: char(约) + date.
	{"约08-08", "约八月八日", nil},
	// The whole thing is one math chain, "-" read 减 (90 < 101.02).
	{"约2008-8-8", "约两千零八减八减八", nil},
	{"约2024-5-6", "约两千零二十四减五减六", nil},
	{"约1999-12-31", "约一千九百九十九减十二减三十一", nil},
	// fraction(约2008/0) + fraction(8/0) + math(8): 92.1.
	{"约2008/08/08", "零分之约两千零八零分之八八", nil},
	// v1.2.0's dotted cardinal needs three dots, so nothing cheap reads
	// "008.08.08": char(约) + date (the 2023 FST, whose cardinal took any
	// dotted digits, reads 约两百八点零八点零八).
	{"约2008.08.08", "约二零零八年八月八日", nil},
	// Years need four digits after 约 too (2023: 约二十二四年, from its
	// two-digit year rule).
	{"约2008年8月8日", "约二零零八年八月八日", nil},
	{"约2024年", "约二零二四年", nil},
	// math(约8:30) with ":" read 比 (90) beats char(约) + time (101.05).
	{"约8:30", "约八比三十", nil},
	{"约3:2", "约三比二", nil},
	{"约-5", "约负五", nil},
	{"约3.14", "约三点一四", nil},
	{"约110", "约一百一十", nil},
	// Eleven digits fit v1.2.0's cardinal number (亿, new since 2023), so
	// math(约…) (90) beats char(约) + phone (100 + 0.06).
	{"约13501234567", "约一百三十五亿零一百二十三万四千五百六十七", nil},
	// fraction's numerator is cardinal.number, 约 included.
	{"约2/3", "三分之约二", nil},
	{"约1/3的人", "三分之约一的人", nil},
	// measure's number takes 约/人均 too; 约2 is not exactly 二, so no 两.
	{"约12.5万元", "约十二点五万元", nil},
	{"人均3-5个", "人均三到五个", nil},
	{"约5kg", "约五千克", nil},
	{"约2个", "约二个", nil},
	{"约2号", "约二号", nil},
	{"约100元", "约一百元", nil},
	{"人均200元", "人均两百元", nil},
	{"约200人", "约两百人", nil},
	// Money starts with the currency sign, so 约 stays a char.
	{"约¥100", "约一百元", nil},
	// cardinal's percent is in number too: math(约50%) (90).
	{"约50%的人", "约百分之五十的人", nil},

	// Years.
	{"2024年", "二零二四年", nil},
	{"在2024年", "在二零二四年", nil},
	{"他生于1990年", "他生于一九九零年", nil},
	{"2024年度报告", "二零二四年度报告", nil},
	{"在2023-2024赛季中", "在二零二三到二零二四赛季中", nil},
	{"2024年5月6日，我们出发了。", "二零二四年五月六日，我们出发了。", nil},

	// Times.
	{"8:30开会", "八点三十分开会", nil},
	{"早上8:30开会", "早上八点三十分开会", nil},
	{"会议在8:30开始。", "会议在八点三十分开始。", nil},
	{"at 8:30", "at 八点三十分", nil},
	{"14:30:15发车", "十四点三十分十五秒发车", nil},
	{"3:00 pm见", "下午三点见", nil},
	{"9:00-17:00营业", "九点到十七点营业", nil},

	// Money.
	{"¥100", "一百元", nil},
	{"花了¥100", "花了一百元", nil},
	{"价格：¥13.5", "价格：十三点五元", nil},
	{"costs $3.5", "costs 三点五美元", nil},
	{"100元", "一百元", nil},
	{"售价5.5万元", "售价五点五万元", nil},
	// A currency sign before a number with a unit ties: money(¥2) + char(个)
	// and char(¥) + measure(2个) both cost 101.05. Here the port and the 2023
	// FST agree: the sign stays as written.
	{"¥2个", "¥两个", []string{"二元个"}},
	{"只要$5个", "只要$五个", []string{"只要五美元个"}},

	// Percentages (v1.2.0 moved them from measure to cardinal).
	{"50%", "百分之五十", nil},
	{"增长了50%", "增长了百分之五十", nil},
	{"下降了-3.5%", "下降了百分之负三点五", nil},
	{"GDP增长5.2%", "GDP增长百分之五点二", nil},

	// Measures.
	{"5kg", "五千克", nil},
	{"重5kg", "重五千克", nil},
	{"时速10km/h", "时速每小时十公里", nil},
	{"跑了3.5公里", "跑了三点五公里", nil},
	{"身高1.8m", "身高一点八米", nil},
	{"气温25°C", "气温二十五摄氏度", nil},
	{"气温-3°C", "气温负三摄氏度", nil},
	{"买了2个", "买了两个", nil},
	{"2个", "两个", nil},
	// 2号 → 两号 → 二号 (measure's [BOS] rewrite of 两号).
	{"2号楼", "二号楼", nil},
	// 名 is a unit, so measure reads 2名 as 两名 even after 第.
	{"第2名", "第两名", nil},

	// Fractions.
	{"1/3", "三分之一", nil},
	{"有2/3的人", "有三分之二的人", nil},

	// Phone numbers (phone.tsv, 11 digits, xxx-xxxxxxxx and 尾号 are
	// v1.2.0's).
	{"13501234567", "幺三五零幺二三四五六七", nil},
	{"电话13501234567", "电话幺三五零幺二三四五六七", nil},
	{"Tel 13501234567", "Tel 幺三五零幺二三四五六七", nil},
	{"拨打110", "拨打幺幺零", nil},
	{"电话：010-12345678", "电话：零一零一二三四五六七八", nil},
	{"尾号1234", "尾号幺二三四", nil},
	{"手机尾号是1234", "手机尾号是幺二三四", nil},

	// Scores: sport needs a team before the score; otherwise math reads
	// ":" as 比 and "-" as 减.
	{"3:2", "三比二", nil},
	{"比分3:2", "比分三比二", nil},
	{"中国3:2韩国", "中国三比二韩国", nil},
	{"最终3-2获胜", "最终三减二获胜", nil},

	// Ranges: measure reads "-" as 到 only before a unit.
	{"3-5", "三减五", nil},
	{"3-5个", "三到五个", nil},
	{"需要3-5天", "需要三到五天", nil},
	{"3~5人", "三到五人", nil},
	{"10-20公里", "十到二十公里", nil},
	{"3-2号", "三到二号", nil},

	// Negative numbers.
	{"-5", "负五", nil},
	{"气温-5度", "气温负五度", nil},
	{"温度为-5", "温度为负五", nil},
	{"x=-2", "x=负二", nil},
	{"下降到-5", "下降到负五", nil},

	// Decimals and plain numbers (math, weight 90; the 2023 cardinal read
	// plain digit strings one by one).
	{"3.14", "三点一四", nil},
	{"圆周率是3.14", "圆周率是三点一四", nil},
	{"版本2.0", "版本二点零", nil},
	{"v2.0", "v二点零", nil},
	{"200", "两百", nil},
	{"共200人", "共两百人", nil},
	{"12.5万", "十二点五万", nil},
	{"iPhone 15", "iPhone 十五", nil},
	{"1+1=2", "一加一等于二", nil},
	{"1,000元", "一千元", nil},
	// Only measure strips thousands commas (in 2023 the cardinal number did
	// too): alone, "000" is three numbers.
	{"1,000", "一,零零零", nil},
	// A date mm.dd (1.02) beats the decimal (90).
	{"10.15", "十月十五日", nil},

	// Ordinals.
	{"第3", "第三", nil},
	{"第3名", "第三名", nil},
	{"排名第3", "排名第三", nil},
	{"第10届", "第十届", nil},
}

// TestContext checks that a token reads the same wherever it stands unless
// the grammar says otherwise, and which rows have equal-cost readings.
func TestContext(t *testing.T) {
	n := New()
	for _, c := range contextCases {
		if got := n.Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q; want %q", c.in, got, c.want)
		}
		want := append([]string{c.want}, c.ties...)
		slices.Sort(want)
		if _, got := optimalReadings(n, c.in); !slices.Equal(got, want) {
			t.Errorf("%q: cheapest readings %q; want %q", c.in, got, want)
		}
	}
}

// TestApproxBeforeDate pins the costs behind 约2008-08-08: the date reading
// must stay more expensive than the math+cardinal one, as upstream's
// weights make it.
func TestApproxBeforeDate(t *testing.T) {
	n := New()
	p := n.newParser("约2008-08-08")
	l := n.run(p, rules, true, true)
	if got, want := l.cost[len(p.r)], wMath+wCardinal; got != want {
		t.Errorf("cost %d; want math+cardinal %d", got, want)
	}
	if date := wChar + wDate; l.cost[len(p.r)] >= date {
		t.Errorf("cost %d; want below char+date %d", l.cost[len(p.r)], date)
	}
}

// optimalReadings enumerates whole tokens (every rule, every math chain,
// the char rule) without the parse loop's pruning and returns the cheapest
// cost and every distinct reading that attains it, sorted.
func optimalReadings(n *Normalizer, s string) (int, []string) {
	p := n.newParser(s)
	size := len(p.r) + 1
	cost := make([]int, size)
	reads := make([]map[string]bool, size)
	for i := 1; i < size; i++ {
		cost[i] = inf
	}
	reads[0] = map[string]bool{"": true}
	for i := range p.r {
		if cost[i] == inf {
			continue
		}
		all := &allSink{}
		p.numBuf = p.numBuf[:0]
		for _, r := range rules {
			r(p, i, all)
		}
		p.numBuf = p.numBuf[:0]
		allMath(p, i, "", all, len(p.r))
		all.put(i+1, wChar, string(p.r[i]))
		for _, tok := range all.toks {
			var b strings.Builder
			n.writePost(&b, []rune(tok.out))
			c := cost[i] + tok.w
			if c < cost[tok.end] {
				cost[tok.end], reads[tok.end] = c, map[string]bool{}
			}
			if c == cost[tok.end] {
				for pre := range reads[i] {
					reads[tok.end][pre+b.String()] = true
				}
			}
		}
	}
	var out []string
	for r := range reads[len(p.r)] {
		out = append(out, r)
	}
	slices.Sort(out)
	return cost[len(p.r)], out
}

type token struct {
	end, w int
	out    string
}

// allSink keeps every token offered.
type allSink struct{ toks []token }

func (s *allSink) want(int, int) bool { return true }

func (s *allSink) put(end, w int, out string) { s.toks = append(s.toks, token{end, w, out}) }

// allMath offers every math chain token starting at q with its reading.
func allMath(p *parser, q int, prefix string, s *allSink, depth int) {
	for _, n := range p.nums(q, false) {
		read := prefix + p.numString(n, false)
		s.put(n.end, wMath, read)
		if depth == 0 {
			continue
		}
		p.match(p.t.operator, p.skipSpace(n.end), func(oe int, op string) {
			allMath(p, p.skipSpace(oe), read+op, s, depth-1)
		})
	}
}
