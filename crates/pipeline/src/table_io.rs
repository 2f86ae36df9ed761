//! Rows <-> polars DataFrames <-> zstd Parquet, for every table, in one place.
//!
//! The conversion is generic and columnar: each row is serialised by serde straight into one
//! builder per column of the table's schema (its fields are the columns, in order: the core test
//! guarantees it), each built according to its [`DType`]; reading hands serde each row's cells
//! from the columns. No JSON value stands between a row and its columns; Json columns hold their
//! nested values as JSON text.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use noisebench_core::checks::StrColumn;
use noisebench_core::{DType, Rows, TableKind, TableSchema};
use polars::prelude::*;
use sha2::{Digest, Sha256};

use crate::atomic::{write_atomic_many, write_atomic_with};
use crate::columns::{Builder, ColumnCells, ColumnReader, ColumnWriter, list_ranges, list_values};

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

/// Build a DataFrame from typed rows, one column per schema column, in schema order: each row is
/// serialised by serde straight into its columns' builders ([`ColumnWriter`]).
pub(crate) fn rows_to_frame(rows: &Rows) -> Result<DataFrame, TableError> {
    frame_of(rows, 0..rows.len())
}

/// [`rows_to_frame`] for the rows in `range`; an error names the row's index among all rows.
fn frame_of(rows: &Rows, range: std::ops::Range<usize>) -> Result<DataFrame, TableError> {
    let schema = rows.kind().schema();
    let height = range.len();
    let mut writer = ColumnWriter::new(&schema, height);
    if let Err((row, e)) = rows.serialize_range(range, &mut writer) {
        let column = writer.failed_column.take().unwrap_or_default();
        return Err(value_error(&schema, row, &column, &e.to_string()));
    }
    let columns: Vec<Column> = schema
        .columns
        .iter()
        .zip(writer.builders)
        .map(|(c, b)| {
            let name: PlSmallStr = c.name.as_str().into();
            match b {
                Builder::Str(b, _) => b.finish().into_series().into_column(),
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

/// Decode a DataFrame into typed rows of `kind`, checking it against the table's schema first:
/// serde builds each row straight from the columns' cells ([`ColumnReader`]).
fn frame_to_rows(kind: TableKind, df: &DataFrame, path: &Path) -> Result<Rows, TableError> {
    let schema = kind.schema();
    check_frame(df, &schema).map_err(|problems| TableError::Schema {
        path: path.into(),
        table: schema.table.clone(),
        problems,
    })?;
    let polars_err = |e: PolarsError| parquet_error(path, e);
    // List columns as one chunk with their flat values, kept here for the cells to borrow.
    let mut lists: Vec<Option<(Column, Series)>> = Vec::with_capacity(schema.columns.len());
    for column in &schema.columns {
        let col = df.column(&column.name).map_err(polars_err)?;
        lists.push(match column.dtype {
            DType::StrList => Some(list_values(col).map_err(polars_err)?),
            _ => None,
        });
    }
    let mut cells = Vec::with_capacity(schema.columns.len());
    for (column, list) in schema.columns.iter().zip(&lists) {
        let read = match list {
            Some((col, inner)) => ColumnCells::read(col, column.dtype, Some(inner)),
            None => ColumnCells::read(
                df.column(&column.name).map_err(polars_err)?,
                column.dtype,
                None,
            ),
        };
        cells.push(read.map_err(polars_err)?);
    }
    let names: Vec<&str> = schema.columns.iter().map(|c| c.name.as_str()).collect();
    // Rows are decoded in parts on as many threads as there are cores (polars reads the file
    // with all of them too), each part from its own reader over the shared cells, straight
    // into one table: decoding parts and joining them would copy every row once more.
    let height = df.height();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts = threads.min(height / ROWS_PER_THREAD + 1).max(1);
    let bounds: Vec<(usize, usize)> = (0..parts)
        .map(|k| (height * k / parts, height * (k + 1) / parts))
        .collect();
    Rows::deserialize_parts(kind, height, &bounds, |start| ColumnReader {
        columns: &cells,
        names: names.clone(),
        row: start,
    })
    .map_err(|(row, source)| TableError::Decode {
        path: path.into(),
        table: schema.table.clone(),
        row,
        source,
    })
}

/// Rows a decoding thread takes at least: below twice this, a table is decoded on one thread.
const ROWS_PER_THREAD: usize = 50_000;

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
        if let Ok(col) = df.column(&column.name) {
            problems.extend(column_problems(col, column));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// How a frame's column breaks its schema column `column`: its type, nulls where none may be.
fn column_problems(col: &Column, column: &noisebench_core::Column) -> Vec<String> {
    let mut problems = Vec::new();
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
    problems
}

/// Write rows to `path` as zstd Parquet, atomically; returns the file's sha256, rows and bytes.
pub fn write_table(path: &Path, rows: &Rows) -> Result<WrittenTable, TableError> {
    let io_err = |source| TableError::Io {
        path: path.into(),
        source,
    };
    let total = rows.len();
    let group = group_rows(rows)?;
    let first = frame_of(rows, 0..total.min(group))?;
    let schema = first.schema().clone();
    let arrow_schema = reader_compatible_arrow_schema(&first);
    // Taken by the writer, so it is dropped once written.
    let mut first = Some(first);
    let mut failure: Option<TableError> = None;
    write_atomic_with(path, |file| {
        let mut writer = BufWriter::new(file);
        let parquet = |e: PolarsError| parquet_error(path, e);
        let written = (|| {
            let mut batched = ParquetWriter::new(&mut writer)
                .with_compression(ParquetCompression::Zstd(None))
                .with_key_value_metadata(Some(KeyValueMetadata::Static(vec![arrow_schema.clone()])))
                .batched(&schema)
                .map_err(parquet)?;
            // The next group's frame is built on another thread while this one is encoded,
            // compressed and written (the two take about as long); at most one frame waits.
            std::thread::scope(|scope| {
                let (send, frames) = std::sync::mpsc::sync_channel(1);
                scope.spawn(move || {
                    let mut start = group;
                    while start < total {
                        let end = (start + group).min(total);
                        let frame = frame_of(rows, start..end);
                        let failed = frame.is_err();
                        // A closed channel: the writer failed and stopped reading.
                        if send.send(frame).is_err() || failed {
                            break;
                        }
                        start = end;
                    }
                });
                if let Some(first) = first.take() {
                    batched.write_batch(&first).map_err(parquet)?;
                }
                for frame in frames {
                    batched.write_batch(&frame?).map_err(parquet)?;
                }
                Ok::<(), TableError>(())
            })?;
            batched.finish().map_err(parquet)?;
            Ok(())
        })();
        if let Err(e) = written {
            failure = Some(e);
            return Err(std::io::Error::other("parquet writer failed"));
        }
        writer.flush()
    })
    .map_err(|e| failure.take().unwrap_or_else(|| io_err(e)))?;
    let (sha256, bytes) = hash_file(path).map_err(io_err)?;
    Ok(WrittenTable {
        sha256,
        rows: total as u64,
        bytes,
    })
}

/// At most this many rows per Parquet row group of a written table. Each group's frame is built
/// from the rows, written and dropped before the next, so a table of long texts (RARE's perturbed
/// documents: 600 MB) is never held twice.
const ROW_GROUP_ROWS: usize = 65_536;

/// About this many bytes of cells per row group: fewer rows per group for long rows.
const ROW_GROUP_BYTES: usize = 32 << 20;

/// Rows probed for their size.
const PROBE_ROWS: usize = 4_096;

/// Rows per row group for `rows`: [`ROW_GROUP_ROWS`], or fewer (down to [`PROBE_ROWS`]) when the
/// first [`PROBE_ROWS`] rows' frame says that many would hold more than [`ROW_GROUP_BYTES`]. A
/// table of at most [`PROBE_ROWS`] rows, or of short rows up to [`ROW_GROUP_ROWS`], is one
/// group: the file polars writes for its whole frame.
fn group_rows(rows: &Rows) -> Result<usize, TableError> {
    if rows.len() <= PROBE_ROWS {
        return Ok(ROW_GROUP_ROWS);
    }
    let per_row = frame_of(rows, 0..PROBE_ROWS)?.estimated_size() / PROBE_ROWS;
    Ok((ROW_GROUP_BYTES / per_row.max(1)).clamp(PROBE_ROWS, ROW_GROUP_ROWS))
}

/// Copy the rows of the table of `kind` at `source` into one file per part, each row to the part
/// `part_of` names for its `column` value (`None` for a null), the file of part `p` at
/// `path_of(p)`; a part no row falls in gets no file. Rows keep their order. The source is read
/// one row group at a time and each group's rows written to their parts' files as they come, so
/// at most one row group is held, never the table (RARE's perturbed documents are 600 MB of
/// text); only `column` is read whole. Every file is written atomically, all or none.
pub fn split_table(
    source: &Path,
    kind: TableKind,
    column: &str,
    part_of: impl Fn(Option<&str>) -> String,
    path_of: impl Fn(&str) -> PathBuf,
) -> Result<BTreeMap<String, WrittenTable>, TableError> {
    let parquet = |e: PolarsError| parquet_error(source, e);
    // Each row's part, as an index into `names`.
    let mut names: BTreeMap<String, u32> = BTreeMap::new();
    let mut of_row: Vec<String> = Vec::new();
    each_string(source, column, |value| of_row.push(part_of(value)))?;
    for name in &of_row {
        names.entry(name.clone()).or_insert(0);
    }
    for (i, index) in names.values_mut().enumerate() {
        *index = i as u32;
    }
    let part: Vec<u32> = of_row.iter().map(|n| names[n]).collect();
    drop(of_row);
    let mut rows = vec![0u64; names.len()];
    for &p in &part {
        rows[p as usize] += 1;
    }
    if names.is_empty() {
        return Ok(BTreeMap::new());
    }
    let row_groups = RowGroups::open(source)?;
    let groups = row_groups.groups.clone();
    let schema = kind.schema();
    let read_group = |group: (usize, usize)| -> Result<DataFrame, TableError> {
        let df = row_groups.read(group, None)?;
        check_frame(&df, &schema).map_err(|problems| TableError::Schema {
            path: source.into(),
            table: schema.table.clone(),
            problems,
        })?;
        Ok(df)
    };
    let first = read_group(groups[0])?;
    let frame_schema = first.schema().clone();
    let arrow_schema = reader_compatible_arrow_schema(&first);
    let mut first = Some(first);
    let paths: Vec<PathBuf> = names.keys().map(|n| path_of(n)).collect();
    let mut failure: Option<TableError> = None;
    write_atomic_many(&paths, |files| {
        let mut writers: Vec<BufWriter<&mut File>> = files.iter_mut().map(BufWriter::new).collect();
        let written = (|| {
            let mut batched = Vec::with_capacity(writers.len());
            for (writer, path) in writers.iter_mut().zip(&paths) {
                batched.push(
                    ParquetWriter::new(writer)
                        .with_compression(ParquetCompression::Zstd(None))
                        .with_key_value_metadata(Some(KeyValueMetadata::Static(vec![
                            arrow_schema.clone(),
                        ])))
                        .batched(&frame_schema)
                        .map_err(|e| parquet_error(path, e))?,
                );
            }
            for &(offset, len) in &groups {
                let df = match first.take() {
                    Some(df) => df,
                    None => read_group((offset, len))?,
                };
                let of_group = &part[offset..offset + len];
                for (p, writer) in batched.iter_mut().enumerate() {
                    let mask: BooleanChunked = of_group
                        .iter()
                        .map(|&q| q as usize == p)
                        .collect::<BooleanChunked>()
                        .with_name(PlSmallStr::EMPTY);
                    if !mask.any() {
                        continue;
                    }
                    let rows = df.filter(&mask).map_err(parquet)?;
                    writer
                        .write_batch(&rows)
                        .map_err(|e| parquet_error(&paths[p], e))?;
                }
            }
            for (writer, path) in batched.iter_mut().zip(&paths) {
                writer.finish().map_err(|e| parquet_error(path, e))?;
            }
            Ok(())
        })();
        if let Err(e) = written {
            failure = Some(e);
            return Err(std::io::Error::other("parquet writer failed"));
        }
        writers.iter_mut().try_for_each(Write::flush)
    })
    .map_err(|e| {
        failure.take().unwrap_or_else(|| TableError::Io {
            path: source.into(),
            source: e,
        })
    })?;
    let mut out = BTreeMap::new();
    for ((name, &p), path) in names.iter().zip(&paths) {
        let (sha256, bytes) = hash_file(path).map_err(|source| TableError::Io {
            path: path.clone(),
            source,
        })?;
        out.insert(
            name.clone(),
            WrittenTable {
                sha256,
                rows: rows[p as usize],
                bytes,
            },
        );
    }
    Ok(out)
}

/// Write a frame to `path` as zstd Parquet, atomically, in one call to polars (the tests'
/// reference for [`write_table`]).
#[cfg(test)]
pub(crate) fn write_frame(path: &Path, df: &mut DataFrame) -> Result<WrittenTable, TableError> {
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
        Some(source) => parquet_error(path, source),
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
    parquet_reader(path)?
        .finish()
        .map_err(|e| parquet_error(path, e))
}

/// A polars reader of the Parquet file at `path`.
fn parquet_reader(path: &Path) -> Result<ParquetReader<BufReader<File>>, TableError> {
    let file = File::open(path).map_err(|source| TableError::Io {
        path: path.into(),
        source,
    })?;
    Ok(ParquetReader::new(BufReader::new(file)))
}

/// The row groups of a Parquet file, each read on its own (the footer parsed once).
struct RowGroups<'p> {
    path: &'p Path,
    metadata: FileMetadataRef,
    /// Each group's first row and row count, in file order.
    groups: Vec<(usize, usize)>,
}

impl<'p> RowGroups<'p> {
    fn open(path: &'p Path) -> Result<Self, TableError> {
        let metadata = parquet_reader(path)?
            .get_metadata()
            .map_err(|e| parquet_error(path, e))?
            .clone();
        let mut groups = Vec::with_capacity(metadata.row_groups.len());
        let mut offset = 0;
        for group in &metadata.row_groups {
            groups.push((offset, group.num_rows()));
            offset += group.num_rows();
        }
        Ok(RowGroups {
            path,
            metadata,
            groups,
        })
    }

    /// The rows `len` rows from `offset` (a group of [`RowGroups::groups`]): the columns
    /// `columns`, or every column.
    fn read(
        &self,
        (offset, len): (usize, usize),
        columns: Option<&[&str]>,
    ) -> Result<DataFrame, TableError> {
        let mut reader = parquet_reader(self.path)?;
        reader.set_metadata(self.metadata.clone());
        reader
            .with_columns(columns.map(|c| c.iter().map(|c| c.to_string()).collect()))
            .with_slice(Some((offset, len)))
            .finish()
            .map_err(|e| parquet_error(self.path, e))
    }
}

/// Call `each` with the columns `columns` (and no others) of each row group of the Parquet file
/// at `path` in turn, in file order: the one reader of single columns, which holds one row
/// group's columns at a time, never the table's.
fn for_each_group(
    path: &Path,
    columns: &[&str],
    mut each: impl FnMut(&DataFrame) -> Result<(), TableError>,
) -> Result<(), TableError> {
    let groups = RowGroups::open(path)?;
    if groups.groups.is_empty() {
        // No row group: the empty columns, so a column the file lacks is still an error.
        return each(&read_columns(path, columns)?);
    }
    for &group in &groups.groups {
        each(&groups.read(group, Some(columns))?)?;
    }
    Ok(())
}

/// Call `each` with each value of the string column `column` of the Parquet file at `path`
/// (`None` for a null), in row order ([`for_each_group`]).
fn each_string(
    path: &Path,
    column: &str,
    mut each: impl FnMut(Option<&str>),
) -> Result<(), TableError> {
    for_each_group(path, &[column], |df| {
        let values = df
            .column(column)
            .and_then(|c| c.str())
            .map_err(|e| parquet_error(path, e))?;
        values.iter().for_each(&mut each);
        Ok(())
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

/// Read a Parquet file as typed rows of `kind`, one row group at a time: the decoded columns
/// of one row group are held beside the rows, never the whole table's twice.
pub fn read_table(path: &Path, kind: TableKind) -> Result<Rows, TableError> {
    let groups = RowGroups::open(path)?;
    if groups.groups.len() <= 1 {
        return frame_to_rows(kind, &read_frame(path)?, path);
    }
    let mut out = Rows::empty(kind);
    for &group in &groups.groups {
        out.append(frame_to_rows(kind, &groups.read(group, None)?, path)?);
    }
    Ok(out)
}

/// The rows of the Parquet file at `path`, from its footer: no column is read.
pub fn row_count(path: &Path) -> Result<u64, TableError> {
    parquet_reader(path)?
        .num_rows()
        .map(|n| n as u64)
        .map_err(|e| parquet_error(path, e))
}

/// Every row's id (the `id` column), in order, reading only that column: what a change list
/// needs of a table with nothing to compare against.
pub fn read_ids(path: &Path) -> Result<Vec<String>, TableError> {
    let mut ids = Vec::new();
    each_string(path, "id", |id| {
        ids.push(id.unwrap_or_default().to_string())
    })?;
    Ok(ids)
}

/// The string or string-list column `column` of the table of `kind` at `path`, a list of values
/// per row (a null is a row of none; a null in a list, an empty value), reading that column alone
/// a row group at a time: what a check of a column reads instead of the table's rows. A column
/// the table's schema lacks or does not type as strings, or the file types otherwise or holds
/// nulls in where the schema allows none, is an error naming it.
pub fn read_str_column(
    path: &Path,
    kind: TableKind,
    column: &str,
) -> Result<StrColumn, TableError> {
    let schema = kind.schema();
    let invalid = |problems: Vec<String>| TableError::Schema {
        path: path.into(),
        table: schema.table.clone(),
        problems,
    };
    let spec = schema
        .columns
        .iter()
        .find(|c| c.name == column && matches!(c.dtype, DType::Str | DType::StrList))
        .ok_or_else(|| invalid(vec![format!("no string column `{column}`")]))?;
    let parquet = |e: PolarsError| parquet_error(path, e);
    let mut out = StrColumn::default();
    for_each_group(path, &[column], |df| {
        let col = df.column(column).map_err(parquet)?;
        let problems = column_problems(col, spec);
        if !problems.is_empty() {
            return Err(invalid(problems));
        }
        if spec.dtype == DType::Str {
            col.str()
                .map_err(parquet)?
                .iter()
                .for_each(|v| out.push(v.unwrap_or_default()));
            return Ok(());
        }
        let (lists, inner) = list_values(col).map_err(parquet)?;
        let values: Vec<Option<&str>> = inner.str().map_err(parquet)?.iter().collect();
        for range in list_ranges(lists.list().map_err(parquet)?) {
            let row = range.map_or(&[][..], |(start, end)| &values[start..end]);
            out.push_row(row.iter().map(|v| v.unwrap_or_default()));
        }
        Ok(())
    })?;
    Ok(out)
}

/// The columns `columns` of the Parquet file at `path`, and no others.
fn read_columns(path: &Path, columns: &[&str]) -> Result<DataFrame, TableError> {
    parquet_reader(path)?
        .with_columns(Some(columns.iter().map(|c| c.to_string()).collect()))
        .finish()
        .map_err(|e| parquet_error(path, e))
}

fn parquet_error(path: &Path, e: PolarsError) -> TableError {
    TableError::Parquet {
        path: path.into(),
        message: e.to_string(),
    }
}

/// How often each value occurs in each string column of `columns` in the table at `path` (a null
/// counts as `None`), reading only those columns: what a summary of categorical columns needs,
/// without decoding the table's rows. A column the file lacks is an error naming it.
pub fn value_counts(
    path: &Path,
    columns: &[&str],
) -> Result<BTreeMap<String, BTreeMap<Option<String>, u64>>, TableError> {
    let mut out = BTreeMap::new();
    if columns.is_empty() {
        return Ok(out);
    }
    let parquet = |e: PolarsError| parquet_error(path, e);
    for_each_group(path, columns, |df| {
        for name in columns {
            let mut seen: std::collections::HashMap<Option<&str>, u64> = Default::default();
            let column = df.column(name).map_err(parquet)?;
            for value in column.str().map_err(parquet)?.iter() {
                *seen.entry(value).or_insert(0) += 1;
            }
            let counts: &mut BTreeMap<Option<String>, u64> =
                out.entry(name.to_string()).or_default();
            for (value, n) in seen {
                *counts.entry(value.map(str::to_string)).or_insert(0) += n;
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// The string columns `columns` of the table at `path`, each a value per row (`None` for a
/// null), reading only those columns: what a reader that needs two fields of a table of long
/// texts (a report's id and domain) reads. A column the file lacks, or not of strings, is an
/// error naming it.
pub fn string_columns(
    path: &Path,
    columns: &[&str],
) -> Result<Vec<Vec<Option<String>>>, TableError> {
    let parquet = |e: PolarsError| parquet_error(path, e);
    let mut out: Vec<Vec<Option<String>>> = vec![Vec::new(); columns.len()];
    for_each_group(path, columns, |df| {
        for (name, values) in columns.iter().zip(&mut out) {
            let column = df.column(name).map_err(parquet)?.str().map_err(parquet)?;
            values.extend(column.iter().map(|v| v.map(str::to_string)));
        }
        Ok(())
    })?;
    Ok(out)
}

/// The float column `column` of the table at `path`, a value per row (`None` for a null),
/// reading only that column.
pub fn float_column(path: &Path, column: &str) -> Result<Vec<Option<f64>>, TableError> {
    let parquet = |e: PolarsError| parquet_error(path, e);
    let mut out = Vec::new();
    for_each_group(path, &[column], |df| {
        out.extend(
            df.column(column)
                .map_err(parquet)?
                .f64()
                .map_err(parquet)?
                .iter(),
        );
        Ok(())
    })?;
    Ok(out)
}

/// The rows of the table of `kind` at `path` whose `column` value `keep` accepts (`None` for a
/// null), in order, read one row group at a time: only the kept rows are decoded, and only
/// `column` and one row group are held besides them (a report's sampled questions' retrievals
/// out of a million).
pub fn read_table_where(
    path: &Path,
    kind: TableKind,
    column: &str,
    keep: impl Fn(Option<&str>) -> bool,
) -> Result<Rows, TableError> {
    let parquet = |e: PolarsError| parquet_error(path, e);
    let mut kept: Vec<bool> = Vec::new();
    each_string(path, column, |value| kept.push(keep(value)))?;
    let mut out = Rows::empty(kind);
    let groups = RowGroups::open(path)?;
    for &(offset, len) in &groups.groups {
        let of_group = &kept[offset..offset + len];
        if of_group.iter().any(|&k| k) {
            let mask: BooleanChunked = of_group.iter().copied().collect();
            let df = groups
                .read((offset, len), None)?
                .filter(&mask)
                .map_err(parquet)?;
            out.append(frame_to_rows(kind, &df, path)?);
        }
    }
    Ok(out)
}

/// Runs `f` once on each thread of polars' pool, the threads that decode Parquet for
/// [`read_table`] and its kin (for the binary's allocator to collect what they freed:
/// `noisebench_core::memory`). Starts the pool if it has not started yet.
pub fn on_each_reader_thread(f: impl Fn() + Sync) {
    polars_core::runtime::THREAD_POOL.broadcast(|_| f());
}

/// sha256 (hex) and size of a file, streamed.
pub fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = BufReader::new(File::open(path)?);
    let mut hasher = Sha256::new();
    let bytes = std::io::copy(&mut file, &mut hasher)?;
    Ok((hex::encode(hasher.finalize()), bytes))
}

/// polars alone on the same table, for the benchmark that holds [`write_table`] and
/// [`read_table`] to it (`crates/snapshot/benches/publish.rs`): the frame is built outside the
/// timing, then written and read with the same Parquet settings and nothing else (no schema
/// check, no hashing, no rows). Not for use outside benchmarks.
#[doc(hidden)]
pub mod baseline {
    use super::*;

    /// A table's frame, built from rows.
    pub struct Frame(DataFrame);

    pub fn frame(rows: &Rows) -> Result<Frame, TableError> {
        Ok(Frame(rows_to_frame(rows)?))
    }

    /// polars writes the frame as zstd Parquet.
    pub fn write(frame: &mut Frame, path: &Path) -> Result<(), TableError> {
        let file = File::create(path).map_err(|source| TableError::Io {
            path: path.into(),
            source,
        })?;
        ParquetWriter::new(BufWriter::new(file))
            .with_compression(ParquetCompression::Zstd(None))
            .finish(&mut frame.0)
            .map(|_| ())
            .map_err(|e| parquet_error(path, e))
    }

    /// polars reads the file into a frame; its height.
    pub fn read(path: &Path) -> Result<usize, TableError> {
        Ok(read_frame(path)?.height())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use noisebench_core::Report;

    fn reports(n: usize) -> Rows {
        Rows::Reports(
            (0..n)
                .map(|i| Report {
                    id: format!("report_{i:07}"),
                    title: (i % 3 == 0).then(|| "word ".repeat(i % 7)),
                    ..Report::default()
                })
                .collect(),
        )
    }

    /// Every kind's ids read alone are its rows' ids.
    #[test]
    fn ids_read_alone_are_the_rows_ids() {
        let dir = tempfile::tempdir().unwrap();
        for kind in TableKind::ALL {
            let path = dir.path().join(format!("{}.parquet", kind.name()));
            let rows = Rows::one_default(*kind);
            write_table(&path, &rows).unwrap();
            assert_eq!(read_ids(&path).unwrap(), rows.ids(), "{}", kind.name());
        }
    }

    /// A string or list column read alone is its rows' values, a row group at a time, a null as
    /// `""` (a null list as none); a column of another type or unknown is an error naming it.
    #[test]
    fn a_column_read_alone_is_its_rows_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reports.parquet");
        let rows = reports(ROW_GROUP_ROWS + 5);
        write_table(&path, &rows).unwrap();
        assert_eq!(RowGroups::open(&path).unwrap().groups.len(), 2);
        let ids = read_str_column(&path, TableKind::Reports, "id").unwrap();
        let want: StrColumn = rows.ids().iter().map(String::as_str).collect();
        assert!(ids == want, "the ids read alone differ");
        let Rows::Reports(reports) = &rows else {
            unreachable!()
        };
        let titles = read_str_column(&path, TableKind::Reports, "title").unwrap();
        let want = StrColumn::of_rows(reports, |r| [r.title.as_deref().unwrap_or_default()]);
        assert!(titles == want, "the titles read alone differ");
        let questions = Rows::Questions(vec![
            noisebench_core::Question {
                answer_chunk_ids: vec!["c1".into(), "c2".into()],
                ..Default::default()
            },
            noisebench_core::Question::default(),
        ]);
        let path = dir.path().join("questions.parquet");
        write_table(&path, &questions).unwrap();
        let chunks = read_str_column(&path, TableKind::Questions, "answer_chunk_ids").unwrap();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks.values(0).collect::<Vec<_>>(), ["c1", "c2"]);
        assert_eq!(chunks.values(1).count(), 0);
        for column in ["nope", "metadata"] {
            let err = read_str_column(&path, TableKind::Questions, column).unwrap_err();
            assert!(err.to_string().contains(column), "{err}");
        }
    }

    /// Counts of string columns, nulls as `None`, read from the file alone; an unknown column
    /// is an error.
    #[test]
    fn value_counts_read_only_the_columns_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.parquet");
        let rows = Rows::Reports(
            (0..5)
                .map(|i| Report {
                    id: format!("r{i}"),
                    format: if i < 3 { "html" } else { "md" }.into(),
                    title: (i == 0).then(|| "T".to_string()),
                    ..Report::default()
                })
                .collect(),
        );
        write_table(&path, &rows).unwrap();
        let counts = value_counts(&path, &["format", "title"]).unwrap();
        assert_eq!(
            counts["format"],
            BTreeMap::from([(Some("html".to_string()), 3), (Some("md".to_string()), 2)])
        );
        assert_eq!(
            counts["title"],
            BTreeMap::from([(None, 4), (Some("T".to_string()), 1)])
        );
        assert!(value_counts(&path, &[]).unwrap().is_empty());
        assert!(value_counts(&path, &["nope"]).is_err());
    }

    /// A table of at most one row group's rows is the file polars writes for its frame, byte
    /// for byte; a longer one is written a group at a time and reads back the same rows.
    #[test]
    fn tables_are_written_a_row_group_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        for n in [0, 1, 1000, ROW_GROUP_ROWS] {
            let rows = reports(n);
            let ours = write_table(&dir.path().join("a.parquet"), &rows).unwrap();
            let reference = write_frame(
                &dir.path().join("b.parquet"),
                &mut rows_to_frame(&rows).unwrap(),
            )
            .unwrap();
            assert_eq!(ours, reference, "{n} rows");
        }
        let rows = reports(2 * ROW_GROUP_ROWS + 5);
        let path = dir.path().join("c.parquet");
        let written = write_table(&path, &rows).unwrap();
        assert_eq!(written.rows, rows.len() as u64);
        let back = read_table(&path, TableKind::Reports).unwrap();
        assert!(back == rows, "the rows read back differ");
        let groups = polars_parquet::read::read_metadata(&mut File::open(&path).unwrap())
            .unwrap()
            .row_groups
            .len();
        assert_eq!(groups, 3);
        // Long rows: groups of fewer rows, the same rows back.
        let long = Rows::Reports(
            (0..3 * PROBE_ROWS)
                .map(|i| Report {
                    id: format!("report_{i:07}"),
                    title: Some(format!("{i} {}", "long title ".repeat(1_000))),
                    ..Report::default()
                })
                .collect(),
        );
        let group = group_rows(&long).unwrap();
        assert_eq!(group, PROBE_ROWS);
        write_table(&path, &long).unwrap();
        assert!(read_table(&path, TableKind::Reports).unwrap() == long);
        let groups = polars_parquet::read::read_metadata(&mut File::open(&path).unwrap())
            .unwrap()
            .row_groups
            .len();
        assert_eq!(groups, 3);
    }

    #[test]
    fn a_cell_that_does_not_decode_names_its_row_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reports.parquet");
        let rows = Rows::Reports(vec![Report::default(), Report::default()]);
        let mut df = rows_to_frame(&rows).unwrap();
        // Still a string column, so the schema check passes; row 1 is not JSON.
        df.with_column(Series::new("metadata".into(), ["{}", "not json"]).into_column())
            .unwrap();
        write_frame(&path, &mut df).unwrap();
        let Err(TableError::Decode { row, source, .. }) = read_table(&path, TableKind::Reports)
        else {
            panic!("expected a decode error")
        };
        assert_eq!(row, 1);
        assert!(source.to_string().contains("column `metadata`"), "{source}");
    }
}
