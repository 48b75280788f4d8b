#!/usr/bin/env python3
"""Writes the golden files of package textnorm by running OpenMOSS's own code.

    python3 gen_golden.py UPSTREAM_DIR OUT_DIR

UPSTREAM_DIR holds tts_robust_normalizer_single_script.py and
text_normalization_pipeline.py from github.com/OpenMOSS/MOSS-TTS-Nano (see
README.md). Both import only the standard library at top level (the
pipeline's WeTextProcessing import happens inside a method this script never
calls), so they are imported as they are, with UPSTREAM_DIR on sys.path.

Needs Python 3.11 (Unicode 14.0.0, the version the Go tables follow) and
nothing else. The Go tests only read the JSON this writes.
"""
import importlib
import json
import os
import random
import sys
import unicodedata

if len(sys.argv) != 3:
    sys.exit(__doc__)
UPSTREAM, OUT = sys.argv[1], sys.argv[2]
if unicodedata.unidata_version != "14.0.0":
    sys.exit("gen_golden.py: need Python 3.11 (Unicode 14.0.0), have %s" % unicodedata.unidata_version)
sys.path.insert(0, UPSTREAM)
robust = importlib.import_module("tts_robust_normalizer_single_script")
pipeline = importlib.import_module("text_normalization_pipeline")

# Each group names the upstream rule(s) it aims at.
GROUPS = {}


def group(name, *items):
    GROUPS.setdefault(name, []).extend(items)


group("upstream_test_cases", *[t for _, t, _ in robust.TEST_CASES])

group("empty_and_space", "", " ", "  ", "\t", "\n", "\r\n", "\u3000", " \n \t ", "\u00a0", "\u2003", "a", "。", "x\u00a0y",
      "\u2028", "a\u2028b", "a\u2029b", "a\u0085b", "a\x0bb\x0cc", "\x1c\x1d\x1e\x1f", "\u200b", "\ufeff", "\u200b\u200c\u200d")

group("base_cleanup_controls", "a\x00b", "a\x07b\x08c", "line1\r\nline2\rline3", "tab\there", "a\x7fb", "a\u0080b\u009fc",
      "soft\u00adhyphen", "rtl\u200emark\u200f", "bidi\u202aembed\u202c", "word\u2060joiner", "private\ue000use",
      "unassigned\u0378x", "new in 15: \U0001FAE8 and \U00011F50", "new in 16: \U0001CC00 x", "tag\U000E0041s",
      "全角　空格", "a\u3000\u3000b", "中\u200b文", "zero\u200bwidth https://x.com/\u200bpath")

group("markdown_links", "[text](https://example.com)", "see [a b](http://x.y/z) now", "[x](ftp://no)", "[](https://e.com)",
      "[a[b](https://e.com)", "[a](https://e.com/with space)", "[a](https://)", "[a](https://e.com", "[a] (https://e.com)",
      "[链接](https://example.cn/路径)", "[a](https://x)[b](http://y)", "[[a](https://x)]", "[a\nb](https://x)",
      "[a](https://x.com/a(b)c)", "[a](httpsx://x)", "[a](https://x.com))", "[a](http://x.com/_under_score)")

group("markdown_lines", "# Heading", "## 标题", "###### six", "####### seven", "#NoSpace", "#\tTab heading",
      "> quote", ">quote", "> > nested", "- item", "* item", "+ item", "-item", "1. first", "12) twelfth", "1.5 number",
      "١. arabic digit", "a\n# b\n> c\n- d\n1. e", "# > - 1. all", "  - indented item  ", "- \n- x", "#", "# ", "> ",
      "第一行\n\n\n第二行", "line one\nline two", "end.\nnext", "问？\n答！", "引号\"\n下一行", "（括号）\n下一行",
      "a\u2028b\u2029c", "\n\n\n", "x\n\ny\n", "1)\tx", "- - double", "+\u3000full")

group("arrows", "A->B", "A -> B", "A-->B", "A<-B", "A<->B", "A=>B", "A<=B", "A<=>B", "a<b", "a < b", "a > b",
      "a-b", "a--b", "a---b", "a- >b", "x→y←z", "⇒ ⇐ ⇔", "⟶⟵⟷⟹⟸⟺↦↤↪↩", "<--", "-->", "<", ">", "<>", "<<->>",
      "请求接入 -> 身份 -> 处理", "配置→推理", "1 => 2", "->->->", "<-<-<-", "a<-=->b", "a == b", "a -= b", "a=b",
      "   ->   x", "x ->   ", "——>", "- - >", "<=", "=>", "<-", "->", "x<-\n-y")

group("urls", "https://github.com/a/b", "http://x.com", "看 https://x.com/a_b_c，好吗", "xhttps://x.com", "https://",
      "https:// x", "http://a.b/c?d=e&f=g#h", "HTTPS://UPPER.COM", "(https://x.com)", "（https://x.com）",
      "https://x.com。下一句", "https://x.com/中文路径", "url:https://x.com/a-b--c", "https://a.com https://b.com",
      "https://x.com/a_b [x]", "https://x.com/__init__.py", "ftp://x.com/a", "https://x.com/...", "https://x.com/a→b",
      "https://x.com/PROT", "http://x.com/___PROT0___")

group("emails", "ops+tts@example.ai", "a.b@c.de", "a@b.c", "a@b.co", "x_a@b.com", "中文a@b.com", "a@b.com.",
      "a@b.com_", "a@b.com-", "a@b.c0m", "a@@b.com", "a%b@c.com", "1%a@b.com", "_a@b.com", "a@-b.com", "a@b..com",
      "a@.com", "mail me at john.doe+x@mail.example.org!", "a@b.com@c.com", "a@b.cOM", "é@b.com", "aé@b.com",
      "a@b.comé", "a+b@c.com", "-a@b.com", ".a@b.com", "a@b.com.cn", "first@second@third.org", "a@b.c-d.com",
      "x a@b.cd1 y", "a@b.c.d", "a@1.2.34", "user@host", "联系：ops@example.ai。")

group("mentions", "@user", "@Fried_rice", "hi@user", "_@user", "@", "@ user", "@中文", "@a", "@abcdefghijklmnopqrstuvwxyz0123456",
      "@abcdefghijklmnopqrstuvwxyz012345", "@user_name_", "关注@biscuit0228_并转发", "@a@b", "(@user)", "x.@y", "@@x",
      "@abcdefghijklmnopqrstuvwxyz01234https://x.com", "@abcdefghijklmnopqrstuvwxyz0123https://x.com",
      "@abcdefghijklmnopqrstuvwxyz012https://x.com", "@abcdefghijklmnopqrstuvwxyz01234a@b.com", "@xhttps://x.com")

group("reddit", "r/golang", "u/spez", "go to r/golang now", "ar/x", "r/", "r/_", "R/x", "u/a_b-c", "去 r/singularity 看",
      "r/a/b", "/r/x", "x/r/y", "u/中文", "r/x.y")

group("hashtags", "#tag", "#tag1#tag2", "a#tag", "_#tag", "# tag", "##tag", "#张雪峰#张雪峰[话题]#张雪峰事件", "#a_b_c",
      "#tag.", "#tag。后面", "(#tag)", "#", "#\u3000x", "x #tag_with-dash y", "#https://x.com", "#1", "中文#标签", "#a,http://b.com")

group("dot_tokens", ".map", ".env", ".gitignore", "a.map", "别把 .env、.npmrc 提交", "...", ".", "..a", "._", ".-", "._x",
      "._-.x", ". map", "x .map", "_.map", "(.map)", ".map.js", "1.5", ".5", ".https://x.com", "..", ".中文", "foo/.bashrc",
      "$.a", "。.a")

group("file_like", "app.js.map", "index.d.ts", "v2.3.1", "3.0.0-rc.1", "fabric-api-0.91.3+1.20.2.jar", "foo/bar-baz.py",
      "a:b", "12:30", "1.2.3", "a.b_c", "a.b_", "ab_c.d", "snake_case_word", "a/b", "a+b", "C++", "c++ and C#",
      "v1.0_beta", "x.y.z_", "node_modules/a.js", "a.b.c.", "test-case", "x-", "-x", "a.", "Hello.World",
      "email.me@x.com", "x.py文件", "处理app.js.map文件", "a1-b2-c3", "中a.b", "1a.2", "A-100", "GPU-A100",
      "a_b.c", "a.b_c.d", "foo.bar_baz.qux", "a.__init__", "x_y_z/a.b", "e.g. this", "i.e., that", "U.S.A.",
      "3.14159", "1,000.50", "a::b", "std::vector<int>", "key=value", "path/to/file_name.txt", "a/b/c_d")

group("underscores", "foo_bar", "中文_ABC", "a__b", "_", "___", "_lead", "trail_", "___PROT0___", "___PROT___",
      "___PROT1___ x", "____PROT0___", "___PROT0______PROT1___", "___PROT0___PROT1___", "PROT", "x_PROT_y",
      "___PROT٣___", "a_b https://x.com/a_b", "关注@foo_bar", "___KEEP_HYPHEN_BEFORE_ZH_WETEXT___")

# _restore_spans is a chain of str.replace calls in index order: tokens that
# swallowed an earlier placeholder leak it, user-typed placeholders expand,
# a mention capped at 32 characters can cut one.
group("restore_chain", "url:https://x.com/a", "wait...what", "x.@y", "#a,http://b.com", "r/___PROT0___",
      "#___PROT1______PROT1___ #___PROT2______PROT2___ #x", "___PROT0___ #a", "#a ___PROT0___", "___PROT1___ #a #b",
      "@abcdefghijklmnopqrstuvwxyz0123456https://x.com", "@abcdefghijklmnopqrstuvwxyz01234a@b.co",
      "@abcdefghijklmnopqrstuvwxyz0123a@b.co", "@abcdefghijklmnopqrstuvwxyz012345http://x.y",
      "a.___PROT0___", "___PROT00___ #a", "___PROT01___ #a #b", "#x ___PROT0___PROT0___", "PROT0___ #a",
      "___PROT#a", "x ___PROT0___ y ___PROT0___ #z", "___PROT0___中 #a", "中___PROT0___ #a")

group("spaces", "This   is   a   test.", "这 是　一 段  含有多种空白的文本。", "这是Anthropic的npm包", "今天update到v2.3.1了",
      "中 1", "1 中", "中 a", "a 中", "中\t\t文", "中\u00a0文", "中\u2003a", "word\u00a0word", "a\t\tb", "a \t b",
      "中文 , 英文", "a , b", "a ; b ! c ? d .", "中 ， 文", "（ 括号 ）", "【 x 】", "“ 引号 ”", "‘ x ’", "《 书 》",
      "「 a 」", "a 、b", "中文：  冒号", "x\u00a0,y", "中123", "中123abc", "中1.5", "中v2", "中.map", "中_x",
      "中___PROT0___", "abc中", "a_b中", "1x中", "123中", "a.b中", "中-a", "中/a", "ア イ", "カタカナ abc",
      "한국어 text", "日本語テキスト english", "中 ___PROT0___ 文", "中文 ABC 中文", "  leading and trailing  ",
      "中\u3400㐀", "\u4dc0 a", "x  \u00a0  y")

group("brackets", "[S1]你好。[S2]收到。", "[ a ]", "[]", "[ ]", "[  ]", "[a", "a]", "[[a]]", "[a][b]", "[a [b] c]",
      "{whisper}", "{ a }", "{}", "{{a}}", "{a", "【公告】", "【 公告 】", "【】", "【【a】", "【a】】", "〖重磅〗",
      "『特别提醒』「不要外传」", "【a」", "「a】", "【\u3000】", "【 】", "[\t]", "[a\tb]", "{ \u00a0 }", "[中文]abc",
      "订单号：[AB-1234-XYZ]", "[https://x.com]", "[@user]", "[#tag]", "【https://x.com】", "[a](b)", "〖a", "『", "」")

group("titles", "《新品发布》", "我喜欢《哈姆雷特》这本书。", "重磅。《新品发布》——现在开始！", "《a》。", "《a》，b", "《a》!",
      "《a》 ", "《a》x", "《》", "《a", "a》", "《a《b》》", "。《a》", "！ 《a》", "；《a》；《b》", "《a》___PROT0___",
      "《a》https://x.com", "《a》--", "《a》—", "《a》——", "《a》 —— b", "x。《a》b", "《a》《b》", "!《a》?",
      "〈a〉", "《a\nb》", "《a》\n", "《a》。《b》", "?  《title》 ,", "《a》;")

group("dashes", "a——b", "a--b", "a—b", "a - b", "a -- b", "a ——  b", "a–b", "a––b", "a―b", "a――b", "—", "——", "-",
      "--", "---", "a-–—―b", "——开头", "结尾——", "2024--05", "x - - y", "【公告】今天 20:00 维护——预计 30 分钟。")

group("punct_runs", "真的假的？？？！！！", "......", "..", "...", "……", "…", "…………", "。。", "．．", "。．",
      "，，", ",,", "，,", "!!", "！！", "!！", "??", "？？", "?？", "?!", "!?", "？！", "！？", "?!?!", "a!b!c",
      "wait...what", "a. . .b", "1...2", "....", "…...", "!!??!!", "？？？", "？", "!", "a,,,b", "a。。。b",
      "这个包把 app.js.map 也发上去了......太离谱了！！！", "今天下雨了……", "https://x.com/a...b", "v1...v2")

group("terminal", "今天发布", "今天发布。", '他说"你好"', "他说“你好”", "(a)", "a)", "（a）", "a'", "a’", "x!", "x?",
      "x;", "x:", "x,", "x-", "x…", "x~", "x*", "x#", "x%", "x&", "x@", "x/", "x\\", "x_", "emoji 😀", "数字 123",
      "\"", "'''", "»", "x»", "x«", "x¿", "x¡", "x・", "x·", "x〜")

group("emoji_and_scripts", "😀😀😀", "👍🏽 ok", "👨‍👩‍👧 family", "🇨🇳🇺🇸", "❤️", "ok 👌。", "こんにちは世界", "カタカナ と ひらがな",
      "한국어 문장", "Привет, мир", "مرحبا بالعالم", "שלום", "Ελληνικά", "हिन्दी", "ไทย", "Tiếng Việt", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ",
      "１２３", "中文ｘｙｚ", "ﾊﾝｶｸ", "①②③", "Ⅻ", "½", "²", "٣", "०", "〇", "x\u0301", "e\u0301\u0301")

group("code_like", "func main() { fmt.Println(\"hi\") }", "if (a && b) || c", "x = y + z * 2", "arr[i] = map[k]",
      "`code`", "```go\nx := 1\n```", "<div class=\"x\">y</div>", "SELECT * FROM t WHERE a > 1;", "$HOME/.bashrc",
      "~/go/bin", "C:\\Users\\x", "0xFF", "1e-9", "a != b", "i++", "--flag=value", "-v", "--", "key: value",
      "a && b", "x|y", "x ^ y", "50%", "$100", "¥100", "€5", "#include <stdio.h>", "#!/bin/sh", "__init__", "__x__.py")

group("hyphen_guard", "-2", " -2", "- 2", "为-2", "为 -2", "x=-2", "(-2)", "计算-2的绝对值", "10-3", "2024-05-01",
      "请求接入-身份判定", "A-B", "A - B", "A-100", "GPU-A100", "TTS-demo", "中文-ABC", "ABC-中文", "is -2", "a--b",
      "a - - b", "-", " - ", "--2", "a-", "-a", "温度-5度", "：-3", "，-3", "；-3", "【-3", "[-3", "{-3", "*-3", "/-3",
      "+-3", "1 - 2 - 3", "中-中-中", "a-b-c", "x -y", "x- y", "中 - 2", "٣-٤", "中-٣", "no hyphen here  ", "  -",
      "a\u00a0-\u00a0b", "-\n2", "___KEEP_HYPHEN_BEFORE_ZH_WETEXT___-x", "ㄅ-ㄆ", "\u4dc0-\u4dc1", "ア-イ")

group("mixed_paragraphs",
      "2026 年 3 月 31 日，安全研究员 Chaofan Shou (@Fried_rice) 发现 Anthropic 的 npm 包中暴露了 .map 文件，",
      "# Release v2.3.1\n\n- Fixed a bug in `app.js.map` → see https://github.com/x/y/issues/12\n- Thanks @alice & @bob!!!\n\n> Note: 版本 3.0.0-rc.1 还不能上生产……",
      "【系统提示】请模仿{sad}低沉语气，说“今天下雨了……”",
      "Hello world! This is a test --- with dashes... and arrows -> here.",
      "今天天气很好，我们去公园玩吧！明天呢？？？",
      "价格是 $19.99，折扣 20%，订单号 [AB-1234]，联系 support@shop.com。",
      "1. 安装依赖\n2. 运行 `make test`\n3. 发布 v2.3.1 到 https://pkg.go.dev",
      "MOSS-TTS-Nano 是一个 0.1B 参数的模型——支持中文、English 和日本語。",
      "他说：“我们下周一（6月3日）开会。”然后离开了。",
      "The meeting is at 10:30-11:45 on 2024-05-01 (UTC+8).",
      "東京は晴れです。明日は雨かもしれません。",
      "Visit r/golang or u/rsc — or #golang on Twitter @golang.",
      )

# Pair every fragment with every other through a few joiners: rule
# interactions (protection next to CJK, brackets around tokens, …).
FRAGMENTS = ["中文", "English", "123", "v1.2", ".env", "a.b_c", "@user", "#tag", "r/x", "https://x.com/p", "a@b.com",
             "[x]", "【y】", "《z》", "->", "——", "...", "！！", "?!", "_", "-", " ", "\n", "。", "," , "（", "）", "ア",
             "😀", "\u00a0", "1.", "# ", "> ", "-2"]
JOINERS = [""]
pairs = []
for a in FRAGMENTS:
    for b in FRAGMENTS:
        for j in JOINERS:
            pairs.append(a + j + b)
group("fragment_pairs", *pairs)

# Seeded random strings over an alphabet of the runes the rules look at.
ALPHABET = list("aZx09_.-/+:@#%=<>[]{}()!?,;'\" \t\n") + list("中文ア、。，！？；：…．—–―【】〖〗『』「」《》（）“”‘’→⇒\u3000\u00a0\u200b😀٣") + \
           ["http://", "https://", "___PROT", "___", "PROT1", "@a", ".map", "v2.3", "--", "->", "\r\n"]
rng = random.Random(20260401)
randoms = []
for n in range(500):
    k = rng.randint(1, 24)
    randoms.append("".join(rng.choice(ALPHABET) for _ in range(k)))
group("random_mix", *randoms)

# Seeded random sentences of real tokens: realistic mixes of every rule.
WORDS = ["今天", "天气", "很好", "我们", "去", "公园", "。", "，", "！", "？", "、", "：", "；", "“", "”", "（", "）", "《", "》",
         "【", "】", "「", "」", "the", "quick", "brown", "fox", "Hello", "World", "v2.3.1", "3.0.0-rc.1", "app.js.map", ".env",
         "foo_bar", "snake_case", "a/b.py", "https://github.com/x/y", "http://a.b/c?d=e", "ops+tts@example.ai", "@alice",
         "@bob_1", "#tag", "#话题", "r/golang", "u/spez", "123", "2024-05-01", "10:30", "-2", "x=-2", "A-B", "中-文", "->",
         "=>", "→", "——", "--", "...", "……", "!!!", "？？！", "[S1]", "{sad}", " ", "  ", "\n", "\n\n", "\t", "\u3000",
         "\u00a0", "# ", "> ", "- ", "1. ", "* ", "[link](https://x.y/z)", "ア", "カタカナ", "ひらがな", "😀", "___", "_",
         "12.5%", "$5", "C++", "i.e.", "e.g.", "U.S.", "Mr.", "ok", "OK!", ":)", "<br>", "x<y", "a>b"]
rng = random.Random(20260402)
sentences = []
for n in range(400):
    k = rng.randint(1, 30)
    sentences.append("".join(rng.choice(WORDS) + rng.choice(["", "", " "]) for _ in range(k)))
group("random_words", *sentences)

os.makedirs(OUT, exist_ok=True)


def dump(name, rows):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        # One case a line: small diffs when the corpus grows.
        f.write("[\n")
        for k, row in enumerate(rows):
            f.write(json.dumps(row, ensure_ascii=False))
            f.write(",\n" if k < len(rows) - 1 else "\n")
        f.write("]\n")
    print("%s: %d cases" % (name, len(rows)))


seen = set()
robust_rows = []
for g, items in GROUPS.items():
    for text in items:
        if text in seen:
            continue
        seen.add(text)
        robust_rows.append({"group": g, "in": text, "out": robust.normalize_tts_text(text)})
dump("robust.json", robust_rows)

# The hyphen guard and the language choice run on what stage 1 produced in
# the pipeline; feed them both raw and robust text.
hyphen_in = []
hseen = set()
for row in robust_rows:
    for text in (row["in"], row["out"]):
        if text not in hseen:
            hseen.add(text)
            hyphen_in.append((row["group"], text))
dump("hyphen.json", [{"group": g, "in": t, "out": pipeline._rewrite_hyphens_before_zh_wetext(t)} for g, t in hyphen_in])

lang_rows = []
for g, t in hyphen_in[::3]:
    for voice in ("", "Ava"):
        lang_rows.append({"group": g, "in": t, "voice": voice,
                          "out": pipeline.resolve_text_normalization_language(text=t, voice=voice)})
dump("language.json", lang_rows)


class StubManager:
    """Stands in for WeTextProcessing with grammars the Go test copies:
    they make the hyphen guard and the stage order visible."""

    def normalize(self, *, text, prompt_text, language):
        def one(s):
            if not s:
                return ""
            if language == "zh":
                return s.replace("-", "减") + "[zh]"
            return s.replace("-", " minus ") + " [en]"
        return one(text), one(prompt_text)


pipe_rows = []
pipe_in = [row for row in robust_rows if row["group"] not in ("fragment_pairs", "random_mix")]
for k, row in enumerate(pipe_in):
    # Every third case carries a prompt text from elsewhere in the corpus:
    # the language comes from the text alone and applies to both.
    prompt = pipe_in[(k * 7 + 3) % len(pipe_in)]["in"] if k % 3 == 0 else ""
    for stage, wetext, rob in (("all", True, True), ("robust", False, True), ("wetext", True, False)):
        res = pipeline.prepare_tts_request_texts(text=row["in"], prompt_text=prompt, enable_wetext=wetext,
                                                 enable_normalize_tts_text=rob, text_normalizer_manager=StubManager())
        pipe_rows.append({"group": row["group"], "in": row["in"], "prompt": prompt, "stage": stage, "out": res["text"],
                          "prompt_out": res["prompt_text"], "method": res["normalization_method"]})
dump("pipeline.json", pipe_rows)
