module github.com/nanovox/nanovox/deploy

go 1.26.8
