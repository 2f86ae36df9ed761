//! Rows <-> polars DataFrames <-> zstd Parquet, for every table, in one place.
//!
//! The conversion is generic: each row is serialised with serde into a JSON object whose keys are the
//! table's columns (the core test guarantees it), and each column is built according to its
//! [`DType`]. Reading reverses the path. Json columns hold nested values as JSON text.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use noisebench_core::{DType, Rows, TableKind, TableSchema};
use polars::prelude::*;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::atomic::write_atomic_with;

#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Reading or writing the Parquet file failed (the message is polars', whose error type stays
    /// inside this crate).
    #[error("{path}: {message}")]
    Parquet { path: PathBuf, message: String },
    #[error("table {table}, row {row}, column `{column}`: {message}")]
    Value {
        table: String,
        row: usize,
        column: String,
        message: String,
    },
    #[error("table {table}: {message}")]
    Build { table: String, message: String },
    #[error("{path}: does not match schema `{table}`: {problems:?}")]
    Schema {
        path: PathBuf,
        table: String,
        problems: Vec<String>,
    },
    #[error("{path}: row {row} does not decode as `{table}`: {source}")]
    Decode {
        path: PathBuf,
        table: String,
        row: usize,
        source: serde_json::Error,
    },
}

/// What was written: the file's hash, rows and size.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WrittenTable {
    pub sha256: String,
    pub rows: u64,
    pub bytes: u64,
}

enum Builder {
    Str(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    List(Box<ListStringChunkedBuilder>),
}

/// The polars dtype a schema column is stored as.
fn polars_dtype(dtype: DType) -> DataType {
    match dtype {
        DType::Str | DType::Json => DataType::String,
        DType::Int => DataType::Int64,
        DType::Float => DataType::Float64,
        DType::Bool => DataType::Boolean,
        DType::StrList => DataType::List(Box::new(DataType::String)),
    }
}

/// Build a DataFrame from typed rows, one column per schema column, in schema order.
fn rows_to_frame(rows: &Rows) -> Result<DataFrame, TableError> {
    let schema = rows.kind().schema();
    let height = rows.len();
    let mut builders: Vec<Builder> = schema
        .columns
        .iter()
        .map(|c| match c.dtype {
            DType::Str | DType::Json => Builder::Str(Vec::with_capacity(height)),
            DType::Int => Builder::Int(Vec::with_capacity(height)),
            DType::Float => Builder::Float(Vec::with_capacity(height)),
            DType::Bool => Builder::Bool(Vec::with_capacity(height)),
            DType::StrList => Builder::List(Box::new(ListStringChunkedBuilder::new(
                c.name.as_str().into(),
                height,
                height,
            ))),
        })
        .collect();
    for (row_index, value) in rows.json_rows().enumerate() {
        let Value::Object(mut object) = value else {
            return Err(value_error(&schema, row_index, "", "row is not an object"));
        };
        for (column, builder) in schema.columns.iter().zip(builders.iter_mut()) {
            let cell = object.remove(&column.name).unwrap_or(Value::Null);
            if cell.is_null() && !column.nullable {
                return Err(value_error(
                    &schema,
                    row_index,
                    &column.name,
                    "null in a non-nullable column",
                ));
            }
            push_cell(builder, column.dtype, cell)
                .map_err(|m| value_error(&schema, row_index, &column.name, &m))?;
        }
    }
    let columns: Vec<Column> = schema
        .columns
        .iter()
        .zip(builders)
        .map(|(c, b)| {
            let name: PlSmallStr = c.name.as_str().into();
            match b {
                Builder::Str(v) => Column::new(name, v),
                Builder::Int(v) => Column::new(name, v),
                Builder::Float(v) => Column::new(name, v),
                Builder::Bool(v) => Column::new(name, v),
                Builder::List(mut l) => l.finish().into_series().into_column(),
            }
        })
        .collect();
    DataFrame::new(height, columns).map_err(|e| TableError::Build {
        table: schema.table.clone(),
        message: e.to_string(),
    })
}

fn value_error(schema: &TableSchema, row: usize, column: &str, message: &str) -> TableError {
    TableError::Value {
        table: schema.table.clone(),
        row,
        column: column.into(),
        message: message.into(),
    }
}

fn push_cell(builder: &mut Builder, dtype: DType, cell: Value) -> Result<(), String> {
    match (builder, dtype) {
        (Builder::Str(v), DType::Json) => {
            v.push(if cell.is_null() {
                None
            } else {
                Some(cell.to_string())
            });
        }
        (Builder::Str(v), _) => match cell {
            Value::Null => v.push(None),
            Value::String(s) => v.push(Some(s)),
            other => return Err(format!("expected a string, got {other}")),
        },
        (Builder::Int(v), _) => match cell {
            Value::Null => v.push(None),
            Value::Number(n) => v.push(Some(
                n.as_i64()
                    .ok_or_else(|| format!("{n} is not a 64-bit integer"))?,
            )),
            other => return Err(format!("expected an integer, got {other}")),
        },
        (Builder::Float(v), _) => match cell {
            Value::Null => v.push(None),
            Value::Number(n) => v.push(n.as_f64()),
            other => return Err(format!("expected a number, got {other}")),
        },
        (Builder::Bool(v), _) => match cell {
            Value::Null => v.push(None),
            Value::Bool(b) => v.push(Some(b)),
            other => return Err(format!("expected a boolean, got {other}")),
        },
        (Builder::List(l), _) => match cell {
            Value::Null => l.append_null(),
            Value::Array(items) => {
                let mut strings = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::String(s) => strings.push(s),
                        other => {
                            return Err(format!("expected a list of strings, got item {other}"));
                        }
                    }
                }
                l.append_values_iter(strings.iter().map(String::as_str));
            }
            other => return Err(format!("expected a list, got {other}")),
        },
    }
    Ok(())
}

/// Decode a DataFrame into typed rows of `kind`, checking it against the table's schema first.
fn frame_to_rows(kind: TableKind, df: &DataFrame, path: &Path) -> Result<Rows, TableError> {
    let schema = kind.schema();
    check_frame(df, &schema).map_err(|problems| TableError::Schema {
        path: path.into(),
        table: schema.table.clone(),
        problems,
    })?;
    let height = df.height();
    // Each row as a JSON array in column order: the schema's columns are the row type's fields
    // in order (a core test holds them to it), and serde builds a struct from a sequence of its
    // fields, so no per-cell key is cloned or hashed.
    let mut objects: Vec<Vec<Value>> = (0..height)
        .map(|_| Vec::with_capacity(schema.columns.len()))
        .collect();
    let polars_err = |e: PolarsError| TableError::Parquet {
        path: path.into(),
        message: e.to_string(),
    };
    for column in &schema.columns {
        let col = df.column(&column.name).map_err(polars_err)?;
        match column.dtype {
            DType::Str => {
                for (obj, v) in objects
                    .iter_mut()
                    .zip(col.str().map_err(polars_err)?.iter())
                {
                    obj.push(v.map_or(Value::Null, |s| Value::String(s.to_string())));
                }
            }
            DType::Json => {
                for (row, (obj, v)) in objects
                    .iter_mut()
                    .zip(col.str().map_err(polars_err)?.iter())
                    .enumerate()
                {
                    let value = match v {
                        None => Value::Null,
                        Some(s) => {
                            serde_json::from_str(s).map_err(|source| TableError::Decode {
                                path: path.into(),
                                table: schema.table.clone(),
                                row,
                                source,
                            })?
                        }
                    };
                    obj.push(value);
                }
            }
            DType::Int => {
                for (obj, v) in objects
                    .iter_mut()
                    .zip(col.i64().map_err(polars_err)?.iter())
                {
                    obj.push(v.map_or(Value::Null, Value::from));
                }
            }
            DType::Float => {
                for (obj, v) in objects
                    .iter_mut()
                    .zip(col.f64().map_err(polars_err)?.iter())
                {
                    obj.push(v.map_or(Value::Null, Value::from));
                }
            }
            DType::Bool => {
                for (obj, v) in objects
                    .iter_mut()
                    .zip(col.bool().map_err(polars_err)?.iter())
                {
                    obj.push(v.map_or(Value::Null, Value::Bool));
                }
            }
            DType::StrList => {
                for (obj, v) in objects
                    .iter_mut()
                    .zip(col.list().map_err(polars_err)?.series_iter())
                {
                    let value = match v {
                        None => Value::Null,
                        Some(series) => Value::Array(
                            series
                                .str()
                                .map_err(polars_err)?
                                .iter()
                                .map(|s| s.map_or(Value::Null, |s| Value::String(s.to_string())))
                                .collect(),
                        ),
                    };
                    obj.push(value);
                }
            }
        }
    }
    Rows::from_json_rows(kind, objects.into_iter().map(Value::Array)).map_err(|(row, source)| {
        TableError::Decode {
            path: path.into(),
            table: schema.table.clone(),
            row,
            source,
        }
    })
}

/// Check a frame against a schema: column names and order, dtypes, nulls in non-nullable columns.
fn check_frame(df: &DataFrame, schema: &TableSchema) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let expected: Vec<String> = schema.columns.iter().map(|c| c.name.clone()).collect();
    if names != expected {
        problems.push(format!("columns are {names:?}, schema says {expected:?}"));
    }
    for column in &schema.columns {
        let Ok(col) = df.column(&column.name) else {
            continue;
        };
        let want = polars_dtype(column.dtype);
        if col.dtype() != &want {
            problems.push(format!(
                "column `{}` has type {}, schema says {}",
                column.name,
                col.dtype(),
                want
            ));
        }
        if !column.nullable && col.null_count() > 0 {
            problems.push(format!(
                "column `{}` has {} nulls but is not nullable",
                column.name,
                col.null_count()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Write rows to `path` as zstd Parquet, atomically; returns the file's sha256, rows and bytes.
pub fn write_table(path: &Path, rows: &Rows) -> Result<WrittenTable, TableError> {
    let mut df = rows_to_frame(rows)?;
    write_frame(path, &mut df)
}

/// Write a frame to `path` as zstd Parquet, atomically.
fn write_frame(path: &Path, df: &mut DataFrame) -> Result<WrittenTable, TableError> {
    let io_err = |source| TableError::Io {
        path: path.into(),
        source,
    };
    let mut polars_error = None;
    let arrow_schema = reader_compatible_arrow_schema(df);
    write_atomic_with(path, |file| {
        let mut writer = BufWriter::new(file);
        if let Err(e) = ParquetWriter::new(&mut writer)
            .with_compression(ParquetCompression::Zstd(None))
            .with_key_value_metadata(Some(KeyValueMetadata::Static(vec![arrow_schema.clone()])))
            .finish(df)
        {
            polars_error = Some(e);
            return Err(std::io::Error::other("parquet writer failed"));
        }
        writer.flush()
    })
    .map_err(|e| match polars_error.take() {
        Some(source) => TableError::Parquet {
            path: path.into(),
            message: source.to_string(),
        },
        None => io_err(e),
    })?;
    let (sha256, bytes) = hash_file(path).map_err(io_err)?;
    Ok(WrittenTable {
        sha256,
        rows: df.height() as u64,
        bytes,
    })
}

/// The `ARROW:schema` footer entry, at polars' oldest compatibility level.
///
/// polars would otherwise declare every string column as Arrow `string_view` and every list as
/// `large_list<string_view>`, and pyarrow hands those types on: pandas then fails on list columns
/// ("Not implemented type for Arrow list to pandas: string_view"), and older readers know no
/// views at all. The data pages are plain Parquet UTF8 either way; only the declared Arrow types
/// change, to `large_string` and `large_list<large_string>`, which every common reader opens.
fn reader_compatible_arrow_schema(df: &DataFrame) -> polars_parquet::write::KeyValue {
    let arrow = df.schema().to_arrow(CompatLevel::oldest());
    polars_parquet::write::schema_to_metadata_key(&arrow)
}

/// Read a Parquet file into a frame.
fn read_frame(path: &Path) -> Result<DataFrame, TableError> {
    let file = File::open(path).map_err(|source| TableError::Io {
        path: path.into(),
        source,
    })?;
    ParquetReader::new(BufReader::new(file))
        .finish()
        .map_err(|source| TableError::Parquet {
            path: path.into(),
            message: source.to_string(),
        })
}

/// A Parquet table opened for checks and previews, without decoding it into rows. Polars stays
/// inside this crate: callers see row counts, schema checks and a printable preview.
pub struct Table {
    df: DataFrame,
}

impl Table {
    /// Open the Parquet file at `path`.
    pub fn open(path: &Path) -> Result<Table, TableError> {
        Ok(Table {
            df: read_frame(path)?,
        })
    }

    pub fn rows(&self) -> usize {
        self.df.height()
    }

    /// Whether the columns, their types and nullability match `schema`; the problems if not.
    pub fn check(&self, schema: &TableSchema) -> Result<(), Vec<String>> {
        check_frame(&self.df, schema)
    }

    /// The first `rows` rows as an aligned text table with the shape and column types.
    pub fn preview(&self, rows: usize) -> String {
        self.df.head(Some(rows)).to_string()
    }
}

/// Read a Parquet file as rows of `T`'s table.
pub fn read_rows<T: noisebench_core::TableRow>(path: &Path) -> Result<Vec<T>, TableError> {
    let rows = read_table(path, T::KIND)?;
    // `read_table` decodes into the kind asked for, so this cannot fail; say so if it ever does.
    T::from_rows(rows).map_err(|other| TableError::Schema {
        path: path.into(),
        table: T::KIND.name().into(),
        problems: vec![format!("decoded as `{}`", other.kind())],
    })
}

/// Read a Parquet file as typed rows of `kind`.
pub fn read_table(path: &Path, kind: TableKind) -> Result<Rows, TableError> {
    let df = read_frame(path)?;
    frame_to_rows(kind, &df, path)
}

/// sha256 (hex) and size of a file, streamed.
pub fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = BufReader::new(File::open(path)?);
    let mut hasher = Sha256::new();
    let bytes = std::io::copy(&mut file, &mut hasher)?;
    Ok((hex::encode(hasher.finalize()), bytes))
}
