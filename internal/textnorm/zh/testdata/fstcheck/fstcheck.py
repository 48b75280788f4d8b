#!/usr/bin/env python3
"""Run text through a compiled WeTextProcessing zh_tn tagger/verbalizer pair.

A development aid, not used by the Go tests: it reads OpenFst "vector" FST
files (the format pynini writes) with the standard library only, and
reproduces Processor.normalize: tag = shortest path of (input @ tagger),
reorder the token fields (TN_ORDERS), verbalize = shortest path of
(reordered @ verbalizer). The shortest path follows OpenFst's
SingleShortestPath with the AutoQueue an acyclic lattice gets (states taken
in the topological order of a depth-first search that follows arcs in
order, input-epsilon arcs first as ComposeFst's OrderedExpand emits them;
float32 sums; only a strictly smaller distance replaces a parent), so ties
are broken the way OpenFst breaks them for that FST file.

Usage (see README.md for where the FST files come from):
    python3 fstcheck.py TAGGER.fst VERBALIZER.fst < inputs.txt
Each output line is: input TAB cost TAB normalized TAB tagged.
"""
import heapq
import math
import re
import struct
import sys

MAGIC = 2125659606


class Fst:
    """A vector FST: start state, final weights, arcs (ilabel, olabel, weight, next)."""

    def __init__(self, path):
        b = open(path, 'rb').read()
        o = 0

        def string():
            nonlocal o
            n, = struct.unpack_from('<i', b, o)
            o += 4
            s = b[o:o + n].decode()
            o += n
            return s

        magic, = struct.unpack_from('<i', b, o)
        o += 4
        if magic != MAGIC:
            raise ValueError('%s: not an OpenFst file' % path)
        fsttype, arctype = string(), string()
        if fsttype != 'vector' or arctype != 'standard':
            raise ValueError('%s: %s/%s FST; want vector/standard' % (path, fsttype, arctype))
        _version, flags = struct.unpack_from('<ii', b, o)
        o += 8
        if flags != 0:
            raise ValueError('%s: FSTs with symbol tables are not supported' % path)
        _props, self.start, nstates, _narcs = struct.unpack_from('<Qqqq', b, o)
        o += 32
        self.final = []
        self.arcs = []
        for _ in range(nstates):
            f, n = struct.unpack_from('<fq', b, o)
            o += 12
            self.final.append(f)
            self.arcs.append([struct.unpack_from('<iifi', b, o + 16 * k) for k in range(n)])
            o += 16 * n


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def shortest(fst, text):
    """Returns (cost, output) of OpenFst's single shortest path of text @ fst, or None."""
    data = text.encode()
    n = len(data)
    start = (0, fst.start)
    # The composed lattice, arcs in ComposeFst order: input-epsilon arcs of
    # the FST state first, then the arcs matching the next input byte.
    adj = {}
    todo = [start]
    seen = {start}
    while todo:
        s = todo.pop()
        i, q = s
        out = [(ol, w, (i, nq)) for il, ol, w, nq in fst.arcs[q] if il == 0]
        if i < n:
            out += [(ol, w, (i + 1, nq)) for il, ol, w, nq in fst.arcs[q] if il == data[i]]
        adj[s] = out
        for _, _, ns in out:
            if ns not in seen:
                seen.add(ns)
                todo.append(ns)
    # Connect: keep the states that reach a final state.
    rev = {}
    for s, out in adj.items():
        for _, _, ns in out:
            rev.setdefault(ns, []).append(s)
    live = {s for s in adj if s[0] == n and fst.final[s[1]] != math.inf}
    todo = list(live)
    while todo:
        for p in rev.get(todo.pop(), []):
            if p not in live:
                live.add(p)
                todo.append(p)
    if start not in live:
        return None
    adj = {s: [a for a in adj[s] if a[2] in live] for s in live}
    # Topological order: reverse DFS finishing order, arcs taken in order.
    finished = []
    stack = [(start, 0)]
    visited = {start}
    while stack:
        s, k = stack[-1]
        if k < len(adj[s]):
            stack[-1] = (s, k + 1)
            ns = adj[s][k][2]
            if ns not in visited:
                visited.add(ns)
                stack.append((ns, 0))
        else:
            stack.pop()
            finished.append(s)
    order = {s: len(finished) - 1 - k for k, s in enumerate(finished)}
    dist = {start: 0.0}
    parent = {}
    queue = [(order[start], start)]
    queued = {start}
    fdist, fstate = math.inf, None
    while queue:
        _, s = heapq.heappop(queue)
        queued.discard(s)
        d = dist[s]
        if s[0] == n and fst.final[s[1]] != math.inf:
            c = f32(d + fst.final[s[1]])
            if c < fdist:
                fdist, fstate = c, s
        for k, (_, w, ns) in enumerate(adj[s]):
            c = f32(d + w)
            if c < dist.get(ns, math.inf):
                dist[ns] = c
                parent[ns] = (s, k)
                if ns not in queued:
                    queued.add(ns)
                    heapq.heappush(queue, (order[ns], ns))
    out = []
    s = fstate
    while s != start:
        p, k = parent[s]
        if adj[p][k][0]:
            out.append(adj[p][k][0])
        s = p
    return fdist, bytes(reversed(out)).decode('utf-8', 'replace')


# tn/token_parser.py TN_ORDERS
ORDERS = {
    'date': ['year', 'month', 'day'],
    'fraction': ['denominator', 'numerator'],
    'measure': ['denominator', 'numerator', 'value'],
    'money': ['value', 'currency'],
    'time': ['noon', 'hour', 'minute', 'second'],
}
VALUE = r'"((?:[^"\\]|\\.)*)"'
TOKEN = r'(\w+) \{((?: \w+: "(?:[^"\\]|\\.)*")*) \}'


def reorder(tagged):
    tokens = []
    for name, body in re.findall(TOKEN, tagged):
        fields = re.findall(r'(\w+): ' + VALUE, body)
        keys = ORDERS.get(name, [k for k, _ in fields])
        values = dict(fields)
        tokens.append(name + ' {' + ''.join(' %s: "%s"' % (k, values[k]) for k in keys if k in values) + ' }')
    return ' '.join(tokens)


def escape(s):  # pynini.escape
    return s.replace('\\', '\\\\').replace('[', '\\[').replace(']', '\\]')


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: fstcheck.py TAGGER.fst VERBALIZER.fst < inputs')
    tagger, verbalizer = Fst(sys.argv[1]), Fst(sys.argv[2])
    for line in sys.stdin:
        line = line.rstrip('\n')
        if not line:
            continue
        tagged = shortest(tagger, escape(line))
        if tagged is None:
            print('%s\t-\t-\t-' % line)
            continue
        spoken = shortest(verbalizer, reorder(tagged[1]))
        print('%s\t%.2f\t%s\t%s' % (line, tagged[0], spoken[1] if spoken else '-', tagged[1]))


if __name__ == '__main__':
    main()
