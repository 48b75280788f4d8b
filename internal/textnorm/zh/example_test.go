package zh_test

import (
	"fmt"

	"github.com/nanovox/nanovox/internal/textnorm/zh"
)

func Example() {
	n := zh.New()
	fmt.Println(n.Normalize("2008-08-08，价格是￥13.5，重达25kg，这儿有只鸟儿。"))
	// Output: 二零零八年八月八日，价格是十三点五元，重达二十五千克，这儿有只鸟儿。
}
