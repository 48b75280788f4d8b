package main

func genAttention(g *gen) {}
