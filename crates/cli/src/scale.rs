//! `noisebench plan --emit slurm|k8s`: a pipeline as jobs for a scheduler the user already runs.
//!
//! [`steps`] turns a plan into an ordered list of steps: a stage that runs per item (it declares
//! shard keys) becomes an array of `--shards` shard runs followed by a merge; any other stage runs
//! once; the last step publishes (`build-snapshot`, which finds every stage done and only
//! publishes). Steps that hold the run folder's lock (runs, merges, the publish) follow one
//! another; the shards of one stage run side by side, each locking only its own folder. The
//! writers render those steps for Slurm (`sbatch --array`, `--dependency=afterok`, submitted by
//! `submit.sh`) and for Kubernetes (Indexed Jobs taking their shard from `JOB_COMPLETION_INDEX`,
//! applied in order by `apply.sh`).
//!
//! What this is not: a scheduler. Nothing here watches jobs, retries them or moves data; every
//! job runs in the same repository folder (a shared file system, or a shared volume), and a
//! failed job stops its dependants the way the scheduler does. Rerunning the plan resumes: done
//! stages and shards are skipped by their fingerprints.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_pipeline::Plan;
use serde_json::{Value, json};

use crate::remote_work::REMOTE_WORK_ENV;

/// What a plan's jobs run, and where.
#[derive(Debug, Clone)]
pub struct PlanRequest {
    /// The pipeline file.
    pub pipeline: PathBuf,
    /// The repository root every job runs in (`--root`).
    pub root: PathBuf,
    /// Shards per per-item stage.
    pub shards: u32,
    /// The `noisebench` binary the Slurm jobs run.
    pub binary: PathBuf,
    /// Kubernetes: the container image.
    pub image: String,
    /// Kubernetes: the persistent volume claim holding the repository folder.
    pub claim: String,
    /// Kubernetes: where that volume is mounted (the root inside the container).
    pub workdir: String,
    /// The shared work folder (`s3://bucket/prefix`) when planning with `--remote-work` or
    /// `NOISEBENCH_REMOTE_WORK`: every job gets it as `NOISEBENCH_REMOTE_WORK`, so steps on
    /// different machines share their stage folders without more setup.
    pub remote_work: Option<String>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `run STAGE` (with what it needs already done).
    Run { stage: String },
    /// `run STAGE --shard i/n` for every i, side by side.
    Shards { stage: String, count: u32 },
    /// `merge STAGE --shards n`.
    Merge { stage: String, count: u32 },
    /// `build-snapshot`: every stage is done; it publishes.
    Publish,
}

impl Step {
    /// The step's name: a job name, a file stem.
    pub fn name(&self) -> String {
        match self {
            Step::Run { stage } => format!("run-{stage}"),
            Step::Shards { stage, .. } => format!("shards-{stage}"),
            Step::Merge { stage, .. } => format!("merge-{stage}"),
            Step::Publish => "publish".into(),
        }
    }

    /// The `noisebench` arguments of the step (`{index}` where the shard index goes).
    pub fn args(&self, pipeline: &str) -> Vec<String> {
        let s = |x: &str| x.to_string();
        match self {
            Step::Run { stage } => vec![s("run"), stage.clone(), s("--pipeline"), s(pipeline)],
            Step::Shards { stage, count } => vec![
                s("run"),
                stage.clone(),
                s("--pipeline"),
                s(pipeline),
                s("--shard"),
                format!("{{index}}/{count}"),
            ],
            Step::Merge { stage, count } => vec![
                s("merge"),
                stage.clone(),
                s("--pipeline"),
                s(pipeline),
                s("--shards"),
                count.to_string(),
            ],
            Step::Publish => vec![s("build-snapshot"), s(pipeline)],
        }
    }
}

/// The steps of `plan` in the order they run. Each step depends on the one before it, except
/// that a merge depends on its shards (which depend on the step before them).
pub fn steps(plan: &Plan, shards: u32) -> Vec<Step> {
    let mut out = Vec::new();
    for stage in &plan.stages {
        if shards > 1 && !stage.stage.shard_keys().is_empty() {
            out.push(Step::Shards {
                stage: stage.id.clone(),
                count: shards,
            });
            out.push(Step::Merge {
                stage: stage.id.clone(),
                count: shards,
            });
        } else {
            out.push(Step::Run {
                stage: stage.id.clone(),
            });
        }
    }
    out.push(Step::Publish);
    out
}

/// Quote for a POSIX shell.
fn sh(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,{}".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn pipeline_arg(request: &PlanRequest) -> String {
    request
        .pipeline
        .strip_prefix(&request.root)
        .unwrap_or(&request.pipeline)
        .display()
        .to_string()
}

fn write(path: &Path, text: &str, executable: bool) -> Result<PathBuf> {
    std::fs::write(path, text).with_context(|| path.display().to_string())?;
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| path.display().to_string())?;
    }
    Ok(path.to_path_buf())
}

/// Slurm: one batch script per step (`NN-<step>.sbatch`; shards as a job array whose task id is
/// the shard index) and `submit.sh`, which submits them in order with `sbatch --parsable`, each
/// with `--dependency=afterok:` on the job before it, and prints every job id (the publish job's
/// last). Returns the files written.
pub fn write_slurm(plan: &Plan, request: &PlanRequest, out: &Path) -> Result<Vec<PathBuf>> {
    write_slurm_steps(&steps(plan, request.shards), request, out)
}

/// [`write_slurm`] for steps already laid out.
fn write_slurm_steps(steps: &[Step], request: &PlanRequest, out: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| out.display().to_string())?;
    let pipeline = pipeline_arg(request);
    let bin = request.binary.display().to_string();
    let logs = out.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| logs.display().to_string())?;
    let mut written = Vec::new();
    let mut submit = String::from(
        "#!/usr/bin/env bash\n# Submit the pipeline's steps to Slurm, in order (written by `noisebench plan --emit slurm`).\n# Each job starts once the one before it completed (afterok); a failed job cancels the rest.\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\nprev=\"\"\ndep() { if [[ -n \"$prev\" ]]; then echo \"--dependency=afterok:$prev\"; fi; }\n",
    );
    for (i, step) in steps.iter().enumerate() {
        let file = format!("{i:02}-{}.sbatch", step.name());
        let mut args = step.args(&pipeline);
        let array = match step {
            Step::Shards { count, .. } => {
                for a in &mut args {
                    *a = a.replace("{index}", "${SLURM_ARRAY_TASK_ID}");
                }
                Some(*count)
            }
            _ => None,
        };
        let command: Vec<String> = std::iter::once(sh(&bin))
            .chain([
                "--root".to_string(),
                sh(&request.root.display().to_string()),
            ])
            .chain(args.iter().map(|a| {
                if a.contains("${SLURM_ARRAY_TASK_ID}") {
                    format!("\"{a}\"")
                } else {
                    sh(a)
                }
            }))
            .collect();
        let output = if array.is_some() {
            logs.join(format!("{}-%a.out", step.name()))
        } else {
            logs.join(format!("{}.out", step.name()))
        };
        let mut script = format!(
            "#!/usr/bin/env bash\n#SBATCH --job-name=nb-{}\n#SBATCH --chdir={}\n#SBATCH --output={}\n#SBATCH --ntasks=1\n",
            step.name(),
            request.root.display(),
            output.display()
        );
        if let Some(count) = array {
            script.push_str(&format!("#SBATCH --array=0-{}\n", count - 1));
        }
        script.push_str("set -euo pipefail\n");
        if let Some(work) = &request.remote_work {
            script.push_str(&format!("export {REMOTE_WORK_ENV}={}\n", sh(work)));
        }
        script.push_str(&format!("exec {}\n", command.join(" ")));
        written.push(write(&out.join(&file), &script, true)?);
        submit.push_str(&format!(
            "prev=$(sbatch --parsable $(dep) {file})\nprev=${{prev%%;*}}\necho \"{} $prev\"\n",
            step.name()
        ));
    }
    written.push(write(&out.join("submit.sh"), &submit, true)?);
    Ok(written)
}

/// The Kubernetes Job of a step: an Indexed Job of `count` completions for shards (the shard is
/// `JOB_COMPLETION_INDEX`), a one-pod Job otherwise; the repository volume mounted at the
/// workdir.
pub(crate) fn k8s_job(step: &Step, request: &PlanRequest, pipeline: &str, order: usize) -> Value {
    let name = format!("nb-{order:02}-{}", step.name())
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(63)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string();
    let args = step.args(pipeline);
    let mut command = vec![
        "noisebench".to_string(),
        "--root".into(),
        request.workdir.clone(),
    ];
    let mut spec = json!({
        "backoffLimit": 2,
        "template": {
            "metadata": { "labels": { "app": "noisebench", "step": step.name() } },
            "spec": {
                "restartPolicy": "Never",
                "containers": [],
                "volumes": [{
                    "name": "work",
                    "persistentVolumeClaim": { "claimName": request.claim }
                }]
            }
        }
    });
    let container_command: Vec<String> = if let Step::Shards { count, .. } = step {
        // The index comes from the environment the Job controller sets in each pod.
        let line = args
            .iter()
            .map(|a| {
                if a.contains("{index}") {
                    a.replace("{index}", "${JOB_COMPLETION_INDEX}")
                } else {
                    sh(a)
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        spec["completionMode"] = json!("Indexed");
        spec["completions"] = json!(count);
        spec["parallelism"] = json!(count);
        spec["backoffLimitPerIndex"] = json!(2);
        spec.as_object_mut()
            .expect("an object")
            .remove("backoffLimit");
        vec![
            "/bin/sh".into(),
            "-c".into(),
            format!("exec noisebench --root {} {line}", sh(&request.workdir)),
        ]
    } else {
        command.extend(args);
        command
    };
    let mut container = json!({
        "name": "noisebench",
        "image": request.image,
        "workingDir": request.workdir,
        "command": container_command,
        "volumeMounts": [{ "name": "work", "mountPath": request.workdir }],
        // Keys come from a Secret the user makes (`kubectl create secret generic
        // noisebench-keys --from-literal=OPENAI_API_KEY=...`, the `AWS_*` variables of a shared
        // work folder too); optional, so offline runs need none.
        "envFrom": [{ "secretRef": { "name": "noisebench-keys", "optional": true } }]
    });
    if let Some(work) = &request.remote_work {
        container["env"] = json!([{ "name": REMOTE_WORK_ENV, "value": work }]);
    }
    spec["template"]["spec"]["containers"] = json!([container]);
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "labels": { "app": "noisebench", "step": step.name() }
        },
        "spec": spec
    })
}

/// Kubernetes: one Job manifest per step (`NN-<step>.yaml`) and `apply.sh`, which applies them in
/// order, waiting for each to complete before the next. Returns the files written.
pub fn write_k8s(plan: &Plan, request: &PlanRequest, out: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| out.display().to_string())?;
    let pipeline = pipeline_arg(request);
    let mut written = Vec::new();
    let mut apply = String::from(
        "#!/usr/bin/env bash\n# Apply the pipeline's Jobs in order, each after the one before completed (written by\n# `noisebench plan --emit k8s`). A failed Job stops the script; applying again resumes (done\n# stages and shards are skipped). Pass kubectl options (e.g. -n NAMESPACE) as arguments.\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\n",
    );
    for (i, step) in steps(plan, request.shards).iter().enumerate() {
        let job = k8s_job(step, request, &pipeline, i);
        let name = job["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let file = format!("{i:02}-{}.yaml", step.name());
        written.push(write(&out.join(&file), &to_yaml(&job), false)?);
        apply.push_str(&format!(
            "kubectl \"$@\" delete job {name} --ignore-not-found\nkubectl \"$@\" apply -f {file}\nkubectl \"$@\" wait --for=condition=complete --timeout=24h job/{name}\n"
        ));
    }
    written.push(write(&out.join("apply.sh"), &apply, true)?);
    Ok(written)
}

/// A JSON value as block-style YAML (strings double-quoted, JSON-escaped: valid YAML 1.2).
pub(crate) fn to_yaml(value: &Value) -> String {
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) => Value::String(s.clone()).to_string(),
            other => other.to_string(),
        }
    }
    fn is_block(v: &Value) -> bool {
        matches!(v, Value::Object(m) if !m.is_empty())
            || matches!(v, Value::Array(a) if !a.is_empty())
    }
    fn emit(v: &Value, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    if is_block(v) {
                        out.push_str(&format!("{pad}{k}:\n"));
                        emit(v, indent + 2, out);
                    } else {
                        out.push_str(&format!("{pad}{k}: {}\n", scalar(v)));
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    if is_block(item) {
                        // The first line of the item's block follows the dash.
                        let mut inner = String::new();
                        emit(item, indent + 2, &mut inner);
                        let trimmed = inner.trim_start_matches(' ');
                        out.push_str(&format!("{pad}- {trimmed}"));
                    } else {
                        out.push_str(&format!("{pad}- {}\n", scalar(item)));
                    }
                }
            }
            other => out.push_str(&format!("{pad}{}\n", scalar(other))),
        }
    }
    let mut out = String::new();
    emit(value, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> PlanRequest {
        PlanRequest {
            pipeline: "/repo/pipelines/demo.toml".into(),
            root: "/repo".into(),
            shards: 3,
            binary: "/usr/local/bin/noisebench".into(),
            image: "registry.example/noisebench:1".into(),
            claim: "nb-work".into(),
            workdir: "/work".into(),
            remote_work: None,
        }
    }

    #[test]
    fn a_shared_work_folder_reaches_every_job() {
        let mut r = request();
        let step = Step::Shards {
            stage: "labels".into(),
            count: 3,
        };
        let container = |job: &Value| job["spec"]["template"]["spec"]["containers"][0].clone();
        assert!(
            container(&k8s_job(&step, &r, "p.toml", 1))
                .get("env")
                .is_none()
        );
        r.remote_work = Some("s3://bucket/runs/one".into());
        let job = k8s_job(&step, &r, "p.toml", 1);
        assert_eq!(check_job(&job), Vec::<String>::new());
        assert_eq!(
            container(&job)["env"],
            json!([{ "name": "NOISEBENCH_REMOTE_WORK", "value": "s3://bucket/runs/one" }])
        );
        // Each Slurm job script exports it before running its step.
        let dir = tempfile::tempdir().unwrap();
        let plan_steps = [step];
        let written = write_slurm_steps(&plan_steps, &r, dir.path()).unwrap();
        let job_script = written
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n != "submit.sh"))
            .unwrap();
        let text = std::fs::read_to_string(job_script).unwrap();
        let export = text.find("export NOISEBENCH_REMOTE_WORK=s3://bucket/runs/one\n");
        let exec = text.find("exec ");
        assert!(export.is_some() && export < exec, "{text}");
    }

    /// The fields the Job API (batch/v1) requires, and those an Indexed Job needs.
    fn check_job(job: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let mut need = |ok: bool, what: &str| {
            if !ok {
                problems.push(what.to_string());
            }
        };
        need(job["apiVersion"] == "batch/v1", "apiVersion batch/v1");
        need(job["kind"] == "Job", "kind Job");
        let name = job["metadata"]["name"].as_str().unwrap_or("");
        need(
            !name.is_empty()
                && name.len() <= 63
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !name.starts_with('-')
                && !name.ends_with('-'),
            "metadata.name: a DNS-1123 label",
        );
        let pod = &job["spec"]["template"]["spec"];
        need(
            matches!(pod["restartPolicy"].as_str(), Some("Never" | "OnFailure")),
            "template restartPolicy Never or OnFailure",
        );
        let containers = pod["containers"].as_array().cloned().unwrap_or_default();
        need(!containers.is_empty(), "at least one container");
        for c in &containers {
            need(
                c["name"].as_str().is_some_and(|n| !n.is_empty()),
                "container name",
            );
            need(
                c["image"].as_str().is_some_and(|n| !n.is_empty()),
                "container image",
            );
            for m in c["volumeMounts"].as_array().cloned().unwrap_or_default() {
                let vol = m["name"].as_str().unwrap_or("");
                need(
                    pod["volumes"]
                        .as_array()
                        .is_some_and(|vs| vs.iter().any(|v| v["name"] == vol)),
                    "every volume mount names a volume",
                );
            }
        }
        if job["spec"]["completionMode"] == "Indexed" {
            need(
                job["spec"]["completions"].as_u64().is_some_and(|n| n > 0),
                "Indexed: completions set",
            );
            need(
                job["spec"].get("backoffLimit").is_none()
                    || job["spec"].get("backoffLimitPerIndex").is_none(),
                "not both backoffLimit and backoffLimitPerIndex",
            );
        }
        problems
    }

    #[test]
    fn every_job_has_the_required_fields_and_shards_are_indexed() {
        let r = request();
        let all = [
            Step::Run {
                stage: "claims".into(),
            },
            Step::Shards {
                stage: "labels".into(),
                count: 3,
            },
            Step::Merge {
                stage: "labels".into(),
                count: 3,
            },
            Step::Publish,
        ];
        for (i, step) in all.iter().enumerate() {
            let job = k8s_job(step, &r, "pipelines/demo.toml", i);
            assert_eq!(check_job(&job), Vec::<String>::new(), "{job:#}");
        }
        let shards = k8s_job(&all[1], &r, "pipelines/demo.toml", 1);
        assert_eq!(shards["spec"]["completionMode"], "Indexed");
        assert_eq!(shards["spec"]["completions"], 3);
        let command = shards["spec"]["template"]["spec"]["containers"][0]["command"]
            .as_array()
            .unwrap();
        let line = command.last().unwrap().as_str().unwrap();
        assert!(line.contains("--shard ${JOB_COMPLETION_INDEX}/3"), "{line}");
        let merge = k8s_job(&all[2], &r, "pipelines/demo.toml", 2);
        assert_eq!(
            merge["spec"]["template"]["spec"]["containers"][0]["command"],
            json!([
                "noisebench",
                "--root",
                "/work",
                "merge",
                "labels",
                "--pipeline",
                "pipelines/demo.toml",
                "--shards",
                "3"
            ])
        );
    }

    #[test]
    fn a_broken_job_is_caught_by_the_check() {
        let r = request();
        let mut job = k8s_job(&Step::Publish, &r, "p.toml", 0);
        job["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
        job["metadata"]["name"] = json!("Bad_Name");
        assert_eq!(check_job(&job).len(), 2);
    }

    #[test]
    fn yaml_is_block_style_with_quoted_strings() {
        let v = json!({"a": {"b": ["x", {"c": 1, "d": "it's: \"q\""}]}, "e": []});
        assert_eq!(
            to_yaml(&v),
            "a:\n  b:\n    - \"x\"\n    - c: 1\n      d: \"it's: \\\"q\\\"\"\ne: []\n"
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(sh("pipelines/demo.toml"), "pipelines/demo.toml");
        assert_eq!(sh("a b"), "'a b'");
        assert_eq!(sh("it's"), r"'it'\''s'");
        assert_eq!(sh(""), "''");
    }
}
