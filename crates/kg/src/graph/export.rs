//! The merged graph as files NetworkX (and Gephi, igraph, yEd) open: GraphML and node-link JSON.
//!
//! Node ids are the canonical entity names, so `G.successors("Acme")` works after loading; the
//! graph is a directed multigraph (two entities may be linked by several relations), each edge
//! keyed by its relation. Both files list nodes and edges in the tables' order, so the same graph
//! gives the same bytes.

use noisebench_core::{Entity, GraphEdge};

/// The side file names.
pub(crate) const GRAPHML_FILE: &str = "graph.graphml";
pub(crate) const JSON_FILE: &str = "graph.json";

/// GraphML of the graph. Written by hand: petgraph-graphml emits its `<key>` elements in hash-set
/// order (not byte-stable across runs) and writes string attributes only.
pub fn graphml(entities: &[Entity], edges: &[GraphEdge]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns \
         http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n",
    );
    for (id, target, name, ty) in [
        ("d0", "node", "entity_id", "string"),
        ("d1", "node", "triplets", "long"),
        ("d2", "node", "reports", "long"),
        ("d3", "edge", "edge_id", "string"),
        ("d4", "edge", "relation", "string"),
        ("d5", "edge", "triplets", "long"),
        ("d6", "edge", "reports", "long"),
    ] {
        out.push_str(&format!(
            "  <key id=\"{id}\" for=\"{target}\" attr.name=\"{name}\" attr.type=\"{ty}\"/>\n"
        ));
    }
    out.push_str("  <graph id=\"G\" edgedefault=\"directed\">\n");
    for e in entities {
        out.push_str(&format!(
            "    <node id=\"{}\">\n      <data key=\"d0\">{}</data>\n      <data key=\"d1\">{}</data>\n      <data key=\"d2\">{}</data>\n    </node>\n",
            escape(&e.name),
            escape(&e.id),
            e.triplets,
            e.report_ids.len()
        ));
    }
    for e in edges {
        out.push_str(&format!(
            "    <edge id=\"{}\" source=\"{}\" target=\"{}\">\n      <data key=\"d3\">{}</data>\n      <data key=\"d4\">{}</data>\n      <data key=\"d5\">{}</data>\n      <data key=\"d6\">{}</data>\n    </edge>\n",
            escape(&e.id),
            escape(&e.head),
            escape(&e.tail),
            escape(&e.id),
            escape(&e.relation),
            e.triplet_ids.len(),
            distinct(&e.report_ids)
        ));
    }
    out.push_str("  </graph>\n</graphml>\n");
    out
}

/// Node-link JSON as NetworkX's `node_link_data` writes it (`nodes`, `edges`, `source`,
/// `target`, `key`), for `networkx.node_link_graph(data)`.
pub(crate) fn node_link(entities: &[Entity], edges: &[GraphEdge]) -> serde_json::Value {
    let nodes: Vec<serde_json::Value> = entities
        .iter()
        .map(|e| {
            serde_json::json!({
                "id": e.name,
                "entity_id": e.id,
                "triplets": e.triplets,
                "report_ids": e.report_ids,
            })
        })
        .collect();
    let links: Vec<serde_json::Value> = edges
        .iter()
        .map(|e| {
            serde_json::json!({
                "source": e.head,
                "target": e.tail,
                "key": e.relation,
                "edge_id": e.id,
                "relation": e.relation,
                "triplet_ids": e.triplet_ids,
                "chunk_ids": e.chunk_ids,
                "report_ids": e.report_ids,
            })
        })
        .collect();
    serde_json::json!({
        "directed": true,
        "multigraph": true,
        "graph": {"name": "noisebench knowledge graph"},
        "nodes": nodes,
        "edges": links,
    })
}

fn distinct(ids: &[String]) -> usize {
    ids.iter().collect::<std::collections::BTreeSet<_>>().len()
}

/// XML text and attribute escaping; characters XML 1.0 cannot hold (most control characters)
/// are left out.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_and_control_characters_left_out() {
        assert_eq!(
            escape("AT&T <\"x\"> 'y'\u{1}"),
            "AT&amp;T &lt;&quot;x&quot;&gt; &apos;y&apos;"
        );
        let e = Entity {
            id: "ent_1".into(),
            name: "R&D".into(),
            report_ids: vec!["r".into()],
            triplets: 1,
        };
        let xml = graphml(&[e], &[]);
        assert!(xml.contains("<node id=\"R&amp;D\">"), "{xml}");
    }
}
