//! CI's replay of the fuzz corpora: every file of `fuzz/corpus/<target>/` (the seeds, what
//! campaigns kept, and every input that once crashed a parser) through its target on stable,
//! without the nightly cargo-fuzz build. Also checks that `fuzz/` wraps exactly these targets.

use std::path::{Path, PathBuf};

use noisebench_fuzz_targets::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

#[test]
fn every_corpus_file_replays_without_a_failure() {
    let mut total = 0;
    for (name, target) in TARGETS {
        let dir = fuzz_dir().join("corpus").join(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no seeds", dir.display());
        for file in &files {
            let data = std::fs::read(file).expect("read a corpus file");
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "{name}: {} fails", file.display());
        }
        total += files.len();
    }
    eprintln!(
        "replayed {total} corpus files over {} targets",
        TARGETS.len()
    );
}

#[test]
fn the_cargo_fuzz_crate_wraps_every_target() {
    let dir = fuzz_dir().join("fuzz_targets");
    let mut wrapped: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect();
    wrapped.sort();
    let mut names: Vec<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    names.sort();
    assert_eq!(wrapped, names);
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for name in &names {
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no [[bin]] {name}"
        );
    }
}

#[test]
fn every_task_accepts_the_offline_answer_to_its_default_input() {
    // The llm_answer seeds are these: each must pass its task's parse and check, so the fuzzer
    // starts inside the accepted region of every task.
    for (i, task) in noisebench_fuzz_targets::LLM_TASKS.iter().enumerate() {
        let seed = (task.seed)();
        let nul = seed
            .iter()
            .position(|&b| b == 0)
            .expect("a NUL after the input");
        let reply = std::str::from_utf8(&seed[nul + 1..]).expect("a UTF-8 reply");
        assert!(
            (task.accepts)(&seed[..nul], reply),
            "{} (pick {i}): the offline answer is refused:\n{reply}",
            task.name
        );
        (task.run)(Some(&seed[..nul]), reply);
    }
}

/// Writes `fuzz/corpus/llm_answer/seed-<crate>-<task>` (run by hand after adding a task).
#[test]
#[ignore = "writes the llm_answer seeds into fuzz/corpus; run by hand after adding a task"]
fn write_llm_answer_seeds() {
    let dir = fuzz_dir().join("corpus/llm_answer");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, seed) in noisebench_fuzz_targets::llm_answer_seeds() {
        std::fs::write(dir.join(name), seed).unwrap();
    }
}
