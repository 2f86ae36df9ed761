//! Every table round-trips through Parquet and the written file matches its schema.

use noisebench_core::*;
use noisebench_pipeline::table_io;

fn sample(kind: TableKind) -> Rows {
    // One default row and one row with every optional field, list and map filled, per table.
    let full = |mut value: serde_json::Value| {
        let schema = kind.schema();
        let object = value.as_object_mut().unwrap();
        for column in &schema.columns {
            let filled = match column.dtype {
                DType::Str => serde_json::json!(format!("{} é ✓", column.name)),
                DType::Int => serde_json::json!(7),
                DType::Float => serde_json::json!(0.25),
                DType::Bool => serde_json::json!(true),
                DType::StrList => serde_json::json!(["a", "b, c"]),
                DType::Json => match object.get(&column.name) {
                    Some(serde_json::Value::Array(_)) if column.name == "blocks" => {
                        serde_json::json!([
                            {"type": "heading", "level": 1, "text": "Item 7"},
                            {"type": "table", "markdown": "| a |\n|---|\n| 1 |", "caption": null, "footnotes": ["x"], "page": 2}
                        ])
                    }
                    _ if column.name == "drop_reasons" => serde_json::json!({"bad_date": 2}),
                    _ => serde_json::json!({"k": "v"}),
                },
            };
            object.insert(column.name.clone(), filled);
        }
        value
    };
    let defaults: Vec<serde_json::Value> = Rows::one_default(kind).json_rows().collect();
    let mut values = defaults.clone();
    values.push(full(defaults[0].clone()));
    Rows::from_json_rows(kind, values).unwrap_or_else(|(row, e)| panic!("{kind} row {row}: {e}"))
}

#[test]
fn every_table_round_trips_and_conforms_to_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    for kind in TableKind::ALL {
        let rows = sample(*kind);
        assert_eq!(rows.len(), 2, "{kind}");
        let path = dir.path().join(format!("{kind}.parquet"));
        let written = table_io::write_table(&path, &rows).unwrap();
        assert_eq!(written.rows, 2);
        let table = table_io::Table::open(&path).unwrap();
        table
            .check(&kind.schema())
            .unwrap_or_else(|p| panic!("{kind}: {p:?}"));
        let back = table_io::read_table(&path, *kind).unwrap();
        assert_eq!(back, rows, "{kind}");
    }
}

#[test]
fn empty_tables_keep_their_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claims.parquet");
    table_io::write_table(&path, &Rows::Claims(vec![])).unwrap();
    let table = table_io::Table::open(&path).unwrap();
    assert_eq!(table.rows(), 0);
    table.check(&Claim::schema()).unwrap();
}

#[test]
fn a_file_of_another_table_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claims.parquet");
    table_io::write_table(&path, &Rows::Claims(vec![Claim::default()])).unwrap();
    let err = table_io::read_table(&path, TableKind::Chunks)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("claims.parquet") && err.contains("chunks"),
        "{err}"
    );
}

#[test]
fn a_table_decoded_on_several_threads_keeps_its_rows_in_order() {
    // Over 100,000 rows a table is decoded in parts, one per core; the parts join in order.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claims.parquet");
    let rows: Vec<Claim> = (0..120_001)
        .map(|i| Claim {
            id: format!("claim_{i:06}"),
            text: format!("claim {i}"),
            speaker: (i % 3 != 0).then(|| format!("speaker {}", i % 7)),
            topics: (0..i % 4).map(|k| format!("t{k}-{i}")).collect(),
            ..Claim::default()
        })
        .collect();
    let rows = Rows::Claims(rows);
    table_io::write_table(&path, &rows).unwrap();
    assert_eq!(
        table_io::read_table(&path, TableKind::Claims).unwrap(),
        rows
    );
}

#[test]
fn a_table_split_by_a_column_keeps_every_row_in_order_in_its_part() {
    // 70,000 rows: two row groups (65,536 rows at most each), read and split one at a time.
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("claims.parquet");
    let claims: Vec<Claim> = (0..70_000)
        .map(|i| Claim {
            id: format!("claim_{i:06}"),
            text: format!("claim {i}"),
            speaker: (i % 5 != 0).then(|| format!("speaker {}", i % 3)),
            topics: (0..i % 3).map(|k| format!("t{k}")).collect(),
            ..Claim::default()
        })
        .collect();
    table_io::write_table(&source, &Rows::Claims(claims.clone())).unwrap();
    // Read whole, a row group at a time: every row, in order, nulls and lists included.
    assert_eq!(
        table_io::read_table(&source, TableKind::Claims).unwrap(),
        Rows::Claims(claims.clone())
    );
    let part_of = |speaker: Option<&str>| match speaker {
        Some("speaker 2") => "two".to_string(),
        Some(_) => "other".to_string(),
        None => "none".to_string(),
    };
    let written = table_io::split_table(&source, TableKind::Claims, "speaker", part_of, |part| {
        dir.path().join("parts").join(format!("{part}.parquet"))
    })
    .unwrap();
    assert_eq!(written.keys().collect::<Vec<_>>(), ["none", "other", "two"]);
    let mut total = 0;
    for (part, entry) in &written {
        let path = dir.path().join("parts").join(format!("{part}.parquet"));
        let expected: Vec<Claim> = claims
            .iter()
            .filter(|c| part_of(c.speaker.as_deref()) == *part)
            .cloned()
            .collect();
        assert_eq!(entry.rows, expected.len() as u64, "{part}");
        assert_eq!(
            table_io::read_table(&path, TableKind::Claims).unwrap(),
            Rows::Claims(expected),
            "{part}"
        );
        assert_eq!(entry.sha256, table_io::hash_file(&path).unwrap().0);
        total += entry.rows;
    }
    assert_eq!(total, 70_000);
}

#[test]
fn a_split_that_cannot_write_a_part_leaves_no_part() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("claims.parquet");
    let claims: Vec<Claim> = ["a", "b"]
        .iter()
        .map(|s| Claim {
            id: format!("claim_{s}"),
            speaker: Some(s.to_string()),
            ..Claim::default()
        })
        .collect();
    table_io::write_table(&source, &Rows::Claims(claims)).unwrap();
    // Part `b`'s folder would sit under a file: it cannot be made.
    std::fs::write(dir.path().join("blocked"), "").unwrap();
    let err = table_io::split_table(
        &source,
        TableKind::Claims,
        "speaker",
        |s| s.unwrap_or_default().to_string(),
        |part| match part {
            "b" => dir.path().join("blocked/b.parquet"),
            _ => dir.path().join(format!("{part}.parquet")),
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("claims.parquet"), "{err}");
    assert!(!dir.path().join("a.parquet").exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}
