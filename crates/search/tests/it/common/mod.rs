#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_core::{
    Claim, Inputs, NoProgress, Rows, StageContext, StageOutput, TableRow, TypedStage,
};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn ctx(stage_dir: &Path, stage_id: &str) -> StageContext {
    StageContext {
        root: root(),
        stage_dir: stage_dir.to_path_buf(),
        pipeline: "test".into(),
        stage_id: stage_id.into(),
        progress: Arc::new(NoProgress),
    }
}

pub fn inputs(tables: Vec<(&str, Rows)>) -> Inputs {
    Inputs::new(
        tables
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<BTreeMap<_, _>>(),
    )
}

pub fn claim(id: &str, text: &str) -> Claim {
    Claim {
        id: id.into(),
        text: text.into(),
        verdict: "false".into(),
        original_rating: "false".into(),
        source: "test".into(),
        ..Claim::default()
    }
}

pub fn run<S: TypedStage>(
    stage: &S,
    config: serde_json::Value,
    inputs: Inputs,
    ctx: &StageContext,
) -> StageOutput
where
    S::Config: serde::de::DeserializeOwned,
{
    let config: S::Config = noisebench_core::parse_config(&config).unwrap();
    stage.validate(&config, &ctx.root).unwrap();
    stage.run(&config, inputs, ctx).unwrap()
}

pub fn table<T: TableRow>(out: &mut StageOutput, name: &str) -> Vec<T> {
    T::from_rows(out.tables.remove(name).unwrap()).unwrap_or_else(|_| panic!("{name}"))
}

pub fn reasons(out: &StageOutput) -> BTreeMap<String, i64> {
    out.report.drop_reasons()
}

/// (item, reason) of every drop, sorted.
pub fn drops(out: &StageOutput) -> Vec<(String, String)> {
    let mut d: Vec<(String, String)> = out
        .report
        .drops
        .iter()
        .map(|d| (d.item.clone(), d.reason.clone()))
        .collect();
    d.sort();
    d
}
