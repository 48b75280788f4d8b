package main

func genVector(g *gen) {}
