"""The baseline of `cargo bench -p noisebench-kg --bench patterns`: RARE's four query patterns mined with NetworkX, the way RARE's traverser does it
(directed graph, one labelled edge per node pair; single-hop = edge into a leaf of in-degree 1 with a
unique simple path; chains by depth-first search over 2..3 hops from every node; stars from a root's
first 4 out-edges in combinations of 2..4; inverted stars from pairs of edges sharing a target; groups
deduplicated by a hash of triplet ids). Written for measurement, in our own code.

usage: networkx_patterns.py gen N_NODES N_EDGES SEED OUT.jsonl   # one random graph with hubs
       networkx_patterns.py gen-docs N_DOCS PER_DOC SEED OUT.jsonl # per-document graphs, few shared
       networkx_patterns.py mine TRIPLETS.jsonl [TIMEOUT_S]        # time each pattern"""
import hashlib, itertools, json, random, signal, sys, time
import networkx as nx


def gen(n_nodes, n_edges, seed, out):
    rng = random.Random(seed)
    # preferential attachment-ish heads, uniform tails: a few hubs, many leaves, like extracted KGs
    weights = [1.0 / (i + 1) ** 0.8 for i in range(n_nodes)]
    rels = [f"rel_{i}" for i in range(200)]
    with open(out, "w") as f:
        for i in range(n_edges):
            h = rng.choices(range(n_nodes), weights)[0]
            t = rng.randrange(n_nodes)
            if h == t:
                continue
            f.write(json.dumps({"triplet_id": f"t{i}", "entity_1": f"e{h}", "relation": rng.choice(rels),
                                "entity_2": f"e{t}", "answer_chunk_id": f"c{rng.randrange(n_edges // 8 + 1)}"}) + "\n")


def gen_docs(n_docs, per_doc, seed, out):
    """Per-document graphs like extracted KGs: a doc-local entity pool with Zipf popularity, a few
    entities shared across documents, chunk ids local to each document."""
    rng = random.Random(seed)
    rels = [f"rel_{i}" for i in range(200)]
    shared = [f"g{i}" for i in range(50)]
    k = 0
    with open(out, "w") as f:
        for d in range(n_docs):
            pool = [f"d{d}_e{i}" for i in range(int(per_doc * 0.9))]
            w = [1.0 / (i + 1) for i in range(len(pool))]
            for _ in range(per_doc):
                h = rng.choices(pool, w)[0] if rng.random() > 0.03 else rng.choice(shared)
                t = rng.choice(pool) if rng.random() > 0.03 else rng.choice(shared)
                if h == t:
                    continue
                f.write(json.dumps({"triplet_id": f"t{k}", "entity_1": h, "relation": rng.choice(rels),
                                    "entity_2": t, "answer_chunk_id": f"d{d}_c{rng.randrange(per_doc // 6 + 1)}"}) + "\n")
                k += 1


def mine(path, budget):
    trip = [json.loads(l) for l in open(path)]
    G = nx.DiGraph()
    for t in trip:
        G.add_edge(t["entity_1"], t["entity_2"], t=t)
    out = {}
    def h(ids):
        return hashlib.sha1(",".join(ids).encode()).hexdigest()

    class Budget(Exception):
        pass
    def on_alarm(*_):
        raise Budget()
    signal.signal(signal.SIGALRM, on_alarm)

    t0 = time.perf_counter(); single = []; note = ""
    signal.alarm(int(budget))
    try:
        for u, v, d in G.edges(data=True):
            if G.out_degree(v) == 0 and G.in_degree(v) == 1:
                if sum(1 for _ in nx.all_simple_paths(G, u, v)) == 1:
                    single.append(d["t"]["triplet_id"])
    except Budget:
        note = "TIMEOUT"
    signal.alarm(0)
    out["single"] = (len(single), time.perf_counter() - t0, note)

    t0 = time.perf_counter(); seen = set(); chains = 0; timed_out = False
    def dfs(path, node, depth):
        nonlocal chains, timed_out
        if time.perf_counter() - t0 > budget:
            timed_out = True; return
        if len(path) >= 2 and (len(path) == depth or G.out_degree(node) == 0):
            k = h(path)
            if k not in seen:
                seen.add(k); chains += 1
            return
        for nbr in G.successors(node):
            dfs(path + [G.edges[node, nbr]["t"]["triplet_id"]], nbr, depth)
    for depth in (2, 3):
        for s in list(G.nodes()):
            dfs([], s, depth)
            if timed_out:
                break
    out["chain"] = (chains, time.perf_counter() - t0, "TIMEOUT" if timed_out else "")

    t0 = time.perf_counter(); seen = set(); stars = 0
    for root in G.nodes():
        outs = [G.edges[root, n]["t"]["triplet_id"] for n in G.successors(root)][:4]
        for size in range(2, min(5, len(outs) + 1)):
            for combo in itertools.combinations(outs, size):
                k = h(combo)
                if k not in seen:
                    seen.add(k); stars += 1
    out["star"] = (stars, time.perf_counter() - t0)

    t0 = time.perf_counter(); seen = set(); inv = 0; timed_out = False
    by_tail = {}
    for u, v, d in G.edges(data=True):
        by_tail.setdefault(v, []).append(d["t"]["triplet_id"])
    for v, ids in by_tail.items():
        for a, b in itertools.combinations(ids, 2):
            k = h((a, b))
            if k not in seen:
                seen.add(k); inv += 1
        if time.perf_counter() - t0 > budget:
            timed_out = True; break
    out["inverted_star"] = (inv, time.perf_counter() - t0, "TIMEOUT" if timed_out else "")
    for k, v in out.items():
        print(k, *v)


if __name__ == "__main__":
    if sys.argv[1] == "gen-docs":
        gen_docs(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif sys.argv[1] == "gen":
        gen(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        mine(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 600)
