#!/bin/sh
# Regenerates the amd64 kernels of package tensor. Run from this directory.
set -e
go run . -out ../kernels_amd64.s -stubs ../kernels_decl_amd64.go -tables ../kernels_tables_amd64.go -erfcoef ../erf_coef.go -dot ../dot_amd64.s -dotdecl ../dot_decl_amd64.go -pkg tensor
