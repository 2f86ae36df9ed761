//! `Hub::download`: a pushed version read back by its `hf://` reference is byte for byte the
//! folder that was pushed (every file the manifest hashes, the card, the change files), and
//! passes `noisebench_snapshot`'s verify when it is a real version (checked in the cli tests).

use noisebench_hub::{Hub, HubError, HubRef, VersionUpload};

use crate::common::{REPO, TOKEN, config, hub, report, version};

#[test]
fn a_pushed_version_reads_back_as_the_same_files() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    let dir = version(tmp.path(), "1.2.0", "a,b");
    let c = Hub::connect(&config(&hub, "NB_HUB_R1", TOKEN)).unwrap();
    let up = VersionUpload::read(&dir, Some(&report(tmp.path(), "1.2.0"))).unwrap();
    c.push(&up, REPO, true).unwrap();

    let cache = tmp.path().join("cache");
    let at = HubRef::parse("hf://acme/noisy-demo@v1.2.0").unwrap();
    let got = c.download(&at, &cache).unwrap();
    assert_eq!(got, cache.join("acme/noisy-demo/1.2.0"));
    for f in &up.files {
        if f.path_in_repo == "report.html" {
            continue;
        }
        assert_eq!(
            std::fs::read(got.join(&f.path_in_repo)).unwrap(),
            std::fs::read(&f.local).unwrap(),
            "{}",
            f.path_in_repo
        );
    }
    // a second read is the cached folder: no request for a file
    let before = hub.requests().len();
    assert_eq!(c.download(&at, &cache).unwrap(), got);
    assert_eq!(hub.requests().len(), before);
    // `main` is asked for again, and lands in the same version's folder
    let main = HubRef::parse("hf://acme/noisy-demo").unwrap();
    assert_eq!(c.download(&main, &cache).unwrap(), got);
    assert!(hub.requests().len() > before);

    let missing = HubRef::parse("hf://acme/noisy-demo@v9.0.0").unwrap();
    let err = c.download(&missing, &cache).unwrap_err();
    assert!(matches!(err, HubError::NoSuchVersion { .. }), "{err:?}");
    assert!(!cache.join("acme/noisy-demo/9.0.0").exists());
}
