//! Properties of the pure parts: a reference prints as it parses; the content digest changes
//! with any data file's hash and not with the manifest's other fields (nor `croissant.json`).

use noisebench_hub::HubRef;
use noisebench_hub::plan::content_digest;
use noisebench_snapshot::Manifest;
use proptest::prelude::*;

fn manifest(hashes: &[(String, String)], created_at: &str) -> Manifest {
    let mut m: Manifest = serde_json::from_value(serde_json::json!({
        "dataset": "d", "version": "1.0.0", "parent": null, "created_at": created_at,
        "pipeline": "p", "config_hash": "c", "code_version": "0", "tables": {}
    }))
    .unwrap();
    for (i, (name, sha)) in hashes.iter().enumerate() {
        m.exports.insert(
            format!("exports/{name}{i}"),
            noisebench_snapshot::ExportEntry {
                format: "f".into(),
                stage: "s".into(),
                sha256: sha.clone(),
                bytes: 1,
            },
        );
    }
    m
}

proptest! {
    #[test]
    fn a_reference_prints_as_it_parses(
        owner in "[a-z0-9][a-z0-9_-]{0,12}",
        name in "[a-z0-9][a-z0-9._-]{0,12}",
        major in 0u64..20, minor in 0u64..20, patch in 0u64..20,
    ) {
        let s = format!("hf://{owner}/{name}@v{major}.{minor}.{patch}");
        let r = HubRef::parse(&s).unwrap();
        prop_assert_eq!(r.to_string(), s.clone());
        prop_assert_eq!(HubRef::parse(&r.to_string()).unwrap(), r);
    }

    #[test]
    fn the_digest_follows_the_hashes_only(
        hashes in proptest::collection::vec(("[a-z]{1,6}", "[0-9a-f]{8}"), 1..6),
        which in any::<prop::sample::Index>(),
    ) {
        let a = content_digest(&manifest(&hashes, "2026-01-01"));
        let mut later = manifest(&hashes, "2027-05-05");
        later.metadata.insert(
            "croissant.json".into(),
            noisebench_snapshot::MetadataEntry { sha256: "d".into(), bytes: 1 },
        );
        prop_assert_eq!(&a, &content_digest(&later));
        let mut changed = hashes.clone();
        let i = which.index(changed.len());
        changed[i].1.push('0');
        prop_assert_ne!(a, content_digest(&manifest(&changed, "2026-01-01")));
    }
}
