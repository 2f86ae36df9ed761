//! Properties of pattern mining on random small graphs: the degree rules, the shapes against a
//! brute-force reading of the definitions, the distinct-chunk rule, the dedupe, and the
//! stability of the capped sample when one edge changes.

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::{GraphEdge, Pattern};
use noisebench_kg::PatternsConfig;
use noisebench_kg::{
    GraphIndex, PatternKind, chains, inverted_stars, mine_pattern, mine_patterns, stars,
};
use proptest::prelude::*;

/// `(head, relation, tail, chunk, report)` triplets over a few nodes.
fn triplets(nodes: u8, max: usize) -> impl Strategy<Value = Vec<(u8, u8, u8, u8, u8)>> {
    prop::collection::vec((0..nodes, 0..3u8, 0..nodes, 0..5u8, 0..2u8), 0..max)
}

/// Graph edges as the graph stage writes them: one per (head, relation, tail), triplets sorted,
/// chunk and report ids aligned.
fn edges_of(ts: &[(u8, u8, u8, u8, u8)]) -> Vec<GraphEdge> {
    // (head, relation, tail) -> (triplet, chunk, report) ids
    type Ids = (String, String, String);
    let mut by_key: BTreeMap<(u8, u8, u8), Vec<Ids>> = BTreeMap::new();
    for (i, &(h, r, t, c, rep)) in ts.iter().enumerate() {
        by_key.entry((h, r, t)).or_default().push((
            format!("t{i:03}"),
            format!("c{c}"),
            format!("rep{rep}"),
        ));
    }
    by_key
        .into_iter()
        .map(|((h, r, t), mut list)| {
            list.sort();
            GraphEdge {
                id: format!("e{h}_{r}_{t}"),
                head: format!("n{h}"),
                relation: format!("r{r}"),
                tail: format!("n{t}"),
                triplet_ids: list.iter().map(|x| x.0.clone()).collect(),
                chunk_ids: list.iter().map(|x| x.1.clone()).collect(),
                report_ids: list.iter().map(|x| x.2.clone()).collect(),
            }
        })
        .collect()
}

/// Like [`triplets`], but about half the endpoints are one of two hubs (nodes 0 and 1), so hubs
/// meet hubs, edges run in parallel (same ends, another relation) and some are self-loops.
fn hub_triplets(nodes: u8, max: usize) -> impl Strategy<Value = Vec<(u8, u8, u8, u8, u8)>> {
    let end = (0..nodes * 2).prop_map(move |x| if x >= nodes { x % 2 } else { x });
    prop::collection::vec((end.clone(), 0..3u8, end, 0..5u8, 0..2u8), 0..max)
}

fn open() -> PatternsConfig {
    PatternsConfig {
        max_per_pattern: None,
        distinct_chunks: false,
        ..PatternsConfig::default()
    }
}

/// Each row's sorted triplet ids, per pattern.
fn sets(rows: &[Pattern], kind: PatternKind) -> BTreeSet<Vec<String>> {
    rows.iter()
        .filter(|p| p.pattern == kind.name())
        .map(|p| {
            let mut t = p.triplet_ids.clone();
            t.sort();
            t
        })
        .collect()
}

fn first(e: &GraphEdge) -> String {
    e.triplet_ids[0].clone()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The patterns by their definitions, over the edge list, without an index.
fn brute(edges: &[GraphEdge], kind: PatternKind) -> BTreeSet<Vec<String>> {
    let out_deg = |n: &str| edges.iter().filter(|e| e.head == n).count();
    let in_deg = |n: &str| edges.iter().filter(|e| e.tail == n).count();
    let mut found = BTreeSet::new();
    match kind {
        PatternKind::SingleHop => {
            for e in edges {
                if e.head != e.tail
                    && in_deg(&e.head) == 0
                    && out_deg(&e.head) == 1
                    && in_deg(&e.tail) == 1
                    && out_deg(&e.tail) == 0
                {
                    found.insert(vec![first(e)]);
                }
            }
        }
        PatternKind::ChainedMultiHop => {
            for a in edges {
                for b in edges.iter().filter(|b| b.head == a.tail) {
                    let nodes = [&a.head, &a.tail, &b.tail];
                    if distinct(&nodes) {
                        found.insert(sorted(vec![first(a), first(b)]));
                    }
                    for c in edges.iter().filter(|c| c.head == b.tail) {
                        let nodes = [&a.head, &a.tail, &b.tail, &c.tail];
                        if distinct(&nodes) {
                            found.insert(sorted(vec![first(a), first(b), first(c)]));
                        }
                    }
                }
            }
        }
        PatternKind::StarShaped => {
            let heads: BTreeSet<&String> = edges.iter().map(|e| &e.head).collect();
            for h in heads {
                let mut outs: Vec<&GraphEdge> = edges
                    .iter()
                    .filter(|e| &e.head == h && &e.tail != h)
                    .collect();
                outs.sort_by_key(|e| first(e));
                let mut leaves: Vec<&GraphEdge> = Vec::new();
                for e in outs {
                    if leaves.len() < 4 && leaves.iter().all(|l| l.tail != e.tail) {
                        leaves.push(e);
                    }
                }
                for mask in 0u32..(1 << leaves.len()) {
                    if (2..=4).contains(&mask.count_ones()) {
                        let set = (0..leaves.len())
                            .filter(|i| mask & (1 << i) != 0)
                            .map(|i| first(leaves[i]))
                            .collect();
                        found.insert(sorted(set));
                    }
                }
            }
        }
        PatternKind::InvertedStarShaped => {
            let tails: BTreeSet<&String> = edges.iter().map(|e| &e.tail).collect();
            for v in tails {
                let mut ins: Vec<&GraphEdge> = edges
                    .iter()
                    .filter(|e| &e.tail == v && &e.head != v)
                    .collect();
                ins.sort_by_key(|e| first(e));
                let mut heads: Vec<&GraphEdge> = Vec::new();
                for e in ins {
                    if heads.iter().all(|l| l.head != e.head) {
                        heads.push(e);
                    }
                }
                for i in 0..heads.len() {
                    for j in i + 1..heads.len() {
                        found.insert(sorted(vec![first(heads[i]), first(heads[j])]));
                    }
                }
            }
        }
    }
    found
}

fn distinct(nodes: &[&String]) -> bool {
    let set: BTreeSet<&&String> = nodes.iter().collect();
    set.len() == nodes.len()
}

fn chunk_of(edges: &[GraphEdge]) -> BTreeMap<String, String> {
    edges
        .iter()
        .map(|e| (first(e), e.chunk_ids[0].clone()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every pattern is exactly what its definition gives; single-hop edges obey the degree rule.
    #[test]
    fn miners_match_the_definitions(ts in triplets(7, 24)) {
        let edges = edges_of(&ts);
        let (rows, facts) = mine_patterns(&edges, &open());
        for kind in PatternKind::ALL {
            prop_assert_eq!(sets(&rows, kind), brute(&edges, kind), "{}", kind.name());
        }
        let total: u64 = facts.patterns.iter().map(|c| c.kept).sum();
        prop_assert_eq!(total as usize, rows.len());
        let ids: BTreeSet<&String> = rows.iter().map(|p| &p.id).collect();
        prop_assert_eq!(ids.len(), rows.len(), "ids unique");
        for p in rows.iter().filter(|p| p.pattern == "single_hop") {
            let e = edges.iter().find(|e| e.id == p.edge_ids[0]).unwrap();
            prop_assert_eq!(edges.iter().filter(|x| x.head == e.head || x.tail == e.head).count(), 1);
            prop_assert_eq!(edges.iter().filter(|x| x.tail == e.tail || x.head == e.tail).count(), 1);
        }
    }

    /// With the rule on, a multi-hop group is kept exactly when its chunks differ, and the
    /// dropped ones are counted.
    #[test]
    fn multi_hop_groups_keep_distinct_chunks(ts in triplets(6, 24)) {
        let edges = edges_of(&ts);
        let chunks = chunk_of(&edges);
        let config = PatternsConfig { distinct_chunks: true, ..open() };
        let (rows, facts) = mine_patterns(&edges, &config);
        for (kind, count) in PatternKind::ALL.into_iter().zip(&facts.patterns) {
            let all = brute(&edges, kind);
            let keep: BTreeSet<Vec<String>> = all
                .iter()
                .filter(|g| {
                    kind == PatternKind::SingleHop
                        || g.iter().map(|t| &chunks[t]).collect::<BTreeSet<_>>().len() == g.len()
                })
                .cloned()
                .collect();
            prop_assert_eq!(sets(&rows, kind), keep.clone());
            prop_assert_eq!(count.found as usize, all.len());
            prop_assert_eq!(count.shared_chunk as usize, all.len() - keep.len());
            prop_assert_eq!(count.kept as usize, keep.len());
        }
        for p in rows.iter().filter(|p| p.pattern != "single_hop") {
            let set: BTreeSet<&String> = p.chunk_ids.iter().collect();
            prop_assert_eq!(set.len(), p.chunk_ids.len());
        }
    }

    /// Bad input where edges share triplet ids: groups with the same sorted triplet ids are
    /// written once, no group names a triplet twice, and the duplicates are counted.
    #[test]
    fn groups_are_deduplicated_by_sorted_triplet_ids(
        ts in triplets(6, 20),
        shared in prop::collection::vec(0..4usize, 20),
    ) {
        let mut edges = edges_of(&ts);
        for (e, s) in edges.iter_mut().zip(&shared) {
            e.triplet_ids[0] = format!("t{s}");
        }
        let index = GraphIndex::new(&edges);
        let (rows, _) = mine_patterns(&edges, &open());
        let ids: BTreeSet<&String> = rows.iter().map(|p| &p.id).collect();
        prop_assert_eq!(ids.len(), rows.len());
        for p in &rows {
            let set: BTreeSet<&String> = p.triplet_ids.iter().collect();
            prop_assert_eq!(set.len(), p.triplet_ids.len(), "a triplet twice");
        }
        for (kind, raw) in [
            (PatternKind::ChainedMultiHop, chains(&index, 2, 3)),
            (PatternKind::StarShaped, stars(&index, 2, 4, 4)),
            (PatternKind::InvertedStarShaped, inverted_stars(&index)),
        ] {
            let expected: BTreeSet<Vec<String>> = raw
                .iter()
                .map(|g| sorted(g.edges().iter().map(|&e| first(index.edge(e))).collect()))
                .filter(|t| t.windows(2).all(|w| w[0] != w[1]))
                .collect();
            let mined = mine_pattern(&index, kind, &open());
            prop_assert_eq!(mined.count.found as usize, expected.len());
            prop_assert_eq!(mined.count.duplicates as usize, raw.len() - expected.len());
            prop_assert_eq!(sets(&rows, kind), expected);
        }
    }

    /// Capped, every pattern keeps `min(cap, eligible)` valid groups and counts exactly what a
    /// brute-force reading of the definitions counts, on multigraphs with hubs, parallel edges
    /// and self-loops, with the distinct-chunk rule on and off.
    #[test]
    fn capped_mining_keeps_valid_groups_and_counts_exactly(
        ts in hub_triplets(9, 70),
        cap in 1..40usize,
        rule in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let edges = edges_of(&ts);
        let chunks = chunk_of(&edges);
        let config = PatternsConfig {
            max_per_pattern: Some(cap),
            distinct_chunks: rule,
            seed,
            ..open()
        };
        let (rows, facts) = mine_patterns(&edges, &config);
        for (kind, count) in PatternKind::ALL.into_iter().zip(&facts.patterns) {
            let all = brute(&edges, kind);
            let eligible: BTreeSet<Vec<String>> = all
                .iter()
                .filter(|g| {
                    !rule
                        || kind == PatternKind::SingleHop
                        || g.iter().map(|t| &chunks[t]).collect::<BTreeSet<_>>().len() == g.len()
                })
                .cloned()
                .collect();
            let kept = sets(&rows, kind);
            prop_assert_eq!(count.found as usize, all.len(), "{}", kind.name());
            prop_assert_eq!(count.duplicates, 0);
            prop_assert_eq!(count.shared_chunk as usize, all.len() - eligible.len());
            prop_assert_eq!(count.kept as usize, cap.min(eligible.len()));
            prop_assert_eq!(count.capped as usize, eligible.len() - count.kept as usize);
            prop_assert_eq!(kept.len(), count.kept as usize, "distinct groups");
            prop_assert!(kept.is_subset(&eligible), "{}: a kept group is not valid", kind.name());
        }
        // Valid in pattern order too: a chain's edges follow one another.
        for p in rows.iter().filter(|p| p.pattern == "chained_multi_hop") {
            let es: Vec<&GraphEdge> = p.edge_ids.iter().map(|id| edges.iter().find(|e| &e.id == id).unwrap()).collect();
            prop_assert!(es.windows(2).all(|w| w[0].tail == w[1].head));
            prop_assert_eq!(p.pivot_entities.len(), es.len() - 1);
        }
        for p in rows.iter().filter(|p| p.pattern == "inverted_star_shaped") {
            let es: Vec<&GraphEdge> = p.edge_ids.iter().map(|id| edges.iter().find(|e| &e.id == id).unwrap()).collect();
            prop_assert!(es[0].tail == es[1].tail && es[0].head != es[1].head);
        }
    }

    /// The capped sample is a function of the graph and the seed: the same on every run and
    /// whatever the order of the input rows.
    #[test]
    fn the_capped_sample_is_stable(
        ts in hub_triplets(9, 60),
        cap in 1..20usize,
        rotate in any::<prop::sample::Index>(),
    ) {
        let edges = edges_of(&ts);
        let config = PatternsConfig { max_per_pattern: Some(cap), ..PatternsConfig::default() };
        let (a, fa) = mine_patterns(&edges, &config);
        let (b, fb) = mine_patterns(&edges, &config);
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(&fa, &fb);
        let mut moved = edges.clone();
        if !moved.is_empty() {
            let r = rotate.index(moved.len());
            moved.rotate_left(r);
            moved.reverse();
        }
        let (c, fc) = mine_patterns(&moved, &config);
        prop_assert_eq!(&a, &c);
        prop_assert_eq!(fa.patterns, fc.patterns);
    }

    /// Changing one edge (removing it or moving its tail) changes the capped sample of single
    /// hops and stars (bottom-k on a hash of each group) only through the groups that change: a
    /// sampled group that still exists leaves the sample only when a new group displaces it, so
    /// at most as many leave as groups appear (and the same the other way round). Chains and
    /// inverted stars are sampled by rank and keep only the size.
    #[test]
    fn one_changed_edge_changes_few_sampled_groups(
        ts in triplets(12, 60),
        pick in any::<prop::sample::Index>(),
        new_tail in 0..12u8,
        remove in any::<bool>(),
        cap in 1..12usize,
    ) {
        prop_assume!(!ts.is_empty());
        let mut changed = ts.clone();
        let i = pick.index(ts.len());
        if remove {
            changed.remove(i);
        } else {
            changed[i].2 = new_tail;
        }
        let (before, after) = (edges_of(&ts), edges_of(&changed));
        let capped = PatternsConfig { max_per_pattern: Some(cap), distinct_chunks: false, ..open() };
        let ids = |edges: &[GraphEdge], config: &PatternsConfig, kind: PatternKind| -> BTreeSet<String> {
            mine_patterns(edges, config).0.into_iter().filter(|p| p.pattern == kind.name()).map(|p| p.id).collect()
        };
        for kind in PatternKind::ALL {
            let (g, g2) = (ids(&before, &open(), kind), ids(&after, &open(), kind));
            let (s, s2) = (ids(&before, &capped, kind), ids(&after, &capped, kind));
            prop_assert!(s.len() == cap.min(g.len()) && s2.len() == cap.min(g2.len()));
            if matches!(kind, PatternKind::ChainedMultiHop | PatternKind::InvertedStarShaped) {
                continue;
            }
            let appeared = g2.difference(&g).count();
            let vanished = g.difference(&g2).count();
            let left = s.iter().filter(|x| g2.contains(*x) && !s2.contains(*x)).count();
            let entered = s2.iter().filter(|x| g.contains(*x) && !s.contains(*x)).count();
            prop_assert!(left <= appeared, "{}: {left} left, {appeared} appeared", kind.name());
            prop_assert!(entered <= vanished, "{}: {entered} entered, {vanished} vanished", kind.name());
            prop_assert!(s.len() == cap.min(g.len()) && s2.len() == cap.min(g2.len()));
        }
    }
}

#[test]
fn an_empty_graph_mines_nothing() {
    let (rows, facts) = mine_patterns(&[], &PatternsConfig::default());
    assert!(rows.is_empty());
    assert!(facts.patterns.iter().all(|c| c.found == 0 && c.kept == 0));
    assert_eq!(facts.patterns.len(), 4);
    assert!(facts.card_lines()[0].contains("no patterns mined"));
}

/// On a graph of a few hundred edges, moving one edge changes a handful of 50 sampled single
/// hops and stars (chains and inverted stars, sampled by rank, may all move).
#[test]
fn a_one_edge_change_moves_a_handful_of_sampled_groups() {
    let ts: Vec<(u8, u8, u8, u8, u8)> = (0..400u32)
        .map(|i| {
            let x = i.wrapping_mul(2_654_435_761);
            (
                (x % 97) as u8,
                (x >> 8) as u8 % 3,
                ((x >> 16) % 97) as u8,
                ((x >> 24) % 5) as u8,
                (i % 2) as u8,
            )
        })
        .filter(|t| t.0 != t.2)
        .collect();
    let mut changed = ts.clone();
    changed[17].2 = changed[17].2.wrapping_add(1) % 97;
    let capped = PatternsConfig {
        max_per_pattern: Some(50),
        ..PatternsConfig::default()
    };
    let (a, fa) = mine_patterns(&edges_of(&ts), &capped);
    let (b, _) = mine_patterns(&edges_of(&changed), &capped);
    // The change is not nothing: it changes at least 50 chains before the cap.
    let uncapped = PatternsConfig {
        max_per_pattern: None,
        ..PatternsConfig::default()
    };
    let (ga, _) = mine_patterns(&edges_of(&ts), &uncapped);
    let (gb, _) = mine_patterns(&edges_of(&changed), &uncapped);
    let kind = PatternKind::ChainedMultiHop;
    let changed_groups = sets(&ga, kind)
        .symmetric_difference(&sets(&gb, kind))
        .count();
    assert!(changed_groups >= 50, "{changed_groups}");
    for (kind, count) in PatternKind::ALL.into_iter().zip(&fa.patterns) {
        assert!(
            kind == PatternKind::SingleHop || count.capped > 0,
            "{}",
            kind.name()
        );
        if matches!(
            kind,
            PatternKind::ChainedMultiHop | PatternKind::InvertedStarShaped
        ) {
            continue;
        }
        let sa = sets(&a, kind);
        let sb = sets(&b, kind);
        let moved = sa.symmetric_difference(&sb).count();
        assert!(
            moved <= 6,
            "{}: {moved} of {} sampled groups changed",
            kind.name(),
            count.kept
        );
    }
}

/// Hubs `H0..H3`, each fed by 40 sources and feeding 40 sinks, all linked to each other: the
/// 3-chains `source -> Hx -> Hy -> sink` are spread evenly over the 12 hub-to-hub middle edges
/// and the inverted stars over the hubs (as tails). A uniform sample of 600 puts about 50 on
/// each middle edge (standard deviation about 7) and spreads its first edges; a sample piled on
/// few centres or few first edges fails.
#[test]
fn the_capped_sample_is_spread_over_the_hubs() {
    let mut ts: Vec<(String, String, String)> = Vec::new();
    for h in 0..4 {
        for i in 0..40 {
            ts.push((format!("s{h}_{i}"), format!("H{h}"), format!("c{}", i % 7)));
            ts.push((
                format!("H{h}"),
                format!("d{h}_{i}"),
                format!("c{}", 7 + i % 5),
            ));
        }
        for g in 0..4 {
            if g != h {
                ts.push((
                    format!("H{h}"),
                    format!("H{g}"),
                    format!("c{}", 20 + h * 4 + g),
                ));
            }
        }
    }
    let edges: Vec<GraphEdge> = ts
        .iter()
        .enumerate()
        .map(|(i, (h, t, c))| GraphEdge {
            id: format!("e{i:04}"),
            head: h.clone(),
            relation: "r".into(),
            tail: t.clone(),
            triplet_ids: vec![format!("t{i:04}")],
            chunk_ids: vec![c.clone()],
            report_ids: vec!["rep".into()],
        })
        .collect();
    let config = PatternsConfig {
        patterns: vec![
            PatternKind::ChainedMultiHop,
            PatternKind::InvertedStarShaped,
        ],
        chain_edges: noisebench_kg::EdgeRange { min: 3, max: 3 },
        max_per_pattern: Some(600),
        ..PatternsConfig::default()
    };
    let (rows, facts) = mine_patterns(&edges, &config);
    assert!(
        facts.patterns.iter().all(|c| c.capped > 4 * c.kept),
        "{facts:?}"
    );
    let mut middle: BTreeMap<&str, usize> = BTreeMap::new();
    let mut firsts: BTreeSet<&str> = BTreeSet::new();
    for p in rows.iter().filter(|p| p.pattern == "chained_multi_hop") {
        *middle.entry(&p.edge_ids[1]).or_default() += 1;
        firsts.insert(&p.edge_ids[0]);
    }
    assert_eq!(middle.len(), 12, "every middle edge sampled: {middle:?}");
    for (edge, n) in &middle {
        assert!(
            (15..=85).contains(n),
            "{edge}: {n} of 600 (about 50 expected)"
        );
    }
    // 600 draws over 160 sources: a uniform sample misses almost none.
    assert!(firsts.len() >= 140, "{} first edges", firsts.len());
    let mut tails: BTreeMap<&str, usize> = BTreeMap::new();
    for p in rows.iter().filter(|p| p.pattern == "inverted_star_shaped") {
        *tails.entry(&p.pivot_entities[0]).or_default() += 1;
    }
    // Each hub has 43 heads (40 sources, 3 hubs): 903 pairs each, so about 150 of 600 each.
    assert_eq!(tails.len(), 4, "{tails:?}");
    for (tail, n) in &tails {
        assert!(
            (100..=200).contains(n),
            "{tail}: {n} of 600 (about 150 expected)"
        );
    }
}
