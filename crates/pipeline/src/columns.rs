//! Typed rows to and from columns through serde, with no JSON value in between.
//!
//! [`ColumnWriter`] is a serde serializer that takes one row (a struct whose fields are the
//! table's columns, in order: a core test holds the data model to it) and appends each field to
//! its column's builder; [`ColumnReader`] is a serde deserializer that hands a row type its
//! fields from the columns at the current row, then moves to the next row. Json columns hold
//! their nested value as JSON text, written and read by `serde_json` for that cell only. Errors
//! name the column; the callers add the table and row.
//!
//! What this is not: a general serde <-> Arrow bridge. It knows the five column types of
//! [`DType`] and the shapes the data model uses (strings, unit enums as strings, integers,
//! floats, booleans, options of those, lists of strings, and anything under a Json column).

use noisebench_core::{DType, TableSchema};
use polars::prelude::*;
use serde::de::{self, DeserializeSeed, IntoDeserializer, SeqAccess, Visitor};
use serde::ser::{self, Impossible, Serialize};

/// The error both directions use: serde_json's, so decode errors keep their type.
type Error = serde_json::Error;

fn error(message: impl std::fmt::Display) -> Error {
    <Error as ser::Error>::custom(message)
}

/// One column being built.
pub(crate) enum Builder {
    /// Strings go straight into polars' string builder; the flag says whether the last cell
    /// was null.
    Str(Box<StringChunkedBuilder>, bool),
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    List(Box<ListStringChunkedBuilder>),
}

impl Builder {
    fn push_null(&mut self) {
        match self {
            Builder::Str(b, last_null) => {
                b.append_null();
                *last_null = true;
            }
            Builder::Int(v) => v.push(None),
            Builder::Float(v) => v.push(None),
            Builder::Bool(v) => v.push(None),
            Builder::List(l) => l.append_null(),
        }
    }

    fn expects(&self) -> &'static str {
        match self {
            Builder::Str(..) => "a string",
            Builder::Int(_) => "an integer",
            Builder::Float(_) => "a number",
            Builder::Bool(_) => "a boolean",
            Builder::List(_) => "a list of strings",
        }
    }
}

/// Serialises rows into one builder per schema column.
pub(crate) struct ColumnWriter<'s> {
    schema: &'s TableSchema,
    pub(crate) builders: Vec<Builder>,
    /// The column a failure happened in (for the caller's error).
    pub(crate) failed_column: Option<String>,
}

impl<'s> ColumnWriter<'s> {
    pub(crate) fn new(schema: &'s TableSchema, height: usize) -> Self {
        let builders = schema
            .columns
            .iter()
            .map(|c| match c.dtype {
                DType::Str | DType::Json => Builder::Str(
                    Box::new(StringChunkedBuilder::new(c.name.as_str().into(), height)),
                    false,
                ),
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
        Self {
            schema,
            builders,
            failed_column: None,
        }
    }
}

fn not_a_row() -> Error {
    error("row is not an object")
}

impl<'a, 's> ser::Serializer for &'a mut ColumnWriter<'s> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = RowFields<'a, 's>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<RowFields<'a, 's>, Error> {
        Ok(RowFields {
            writer: self,
            column: 0,
        })
    }

    fn serialize_bool(self, _: bool) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_i64(self, _: i64) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_u64(self, _: u64) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_f64(self, _: f64) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_i8(self, _: i8) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_i16(self, _: i16) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_i32(self, _: i32) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_u8(self, _: u8) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_u16(self, _: u16) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_u32(self, _: u32) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_f32(self, _: f32) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_char(self, _: char) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_str(self, _: &str) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(not_a_row())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(not_a_row())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(not_a_row())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(not_a_row())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(not_a_row())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(not_a_row())
    }
}

/// The fields of one row, each into its column.
pub(crate) struct RowFields<'a, 's> {
    writer: &'a mut ColumnWriter<'s>,
    column: usize,
}

impl ser::SerializeStruct for RowFields<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let schema = self.writer.schema;
        let Some(column) = schema.columns.get(self.column) else {
            self.writer.failed_column = Some(key.to_string());
            return Err(error(format!(
                "field `{key}` is not a column of the schema"
            )));
        };
        if column.name != key {
            self.writer.failed_column = Some(key.to_string());
            return Err(error(format!(
                "field `{key}` where the schema has column `{}`",
                column.name
            )));
        }
        let builder = &mut self.writer.builders[self.column];
        let result = if column.dtype == DType::Json {
            match serde_json::to_string(value) {
                Ok(text) if text == "null" => {
                    builder.push_null();
                    Ok(())
                }
                Ok(text) => {
                    if let Builder::Str(b, last_null) = builder {
                        b.append_value(text);
                        *last_null = false;
                    }
                    Ok(())
                }
                Err(e) => Err(e),
            }
        } else {
            value.serialize(Cell { builder })
        };
        let result = result.and_then(|()| {
            if !column.nullable && is_null_last(&self.writer.builders[self.column]) {
                Err(error("null in a non-nullable column"))
            } else {
                Ok(())
            }
        });
        if result.is_err() {
            self.writer.failed_column = Some(column.name.clone());
        }
        self.column += 1;
        result
    }

    fn end(self) -> Result<(), Error> {
        let schema = self.writer.schema;
        if self.column != schema.columns.len() {
            let missing = &schema.columns[self.column.min(schema.columns.len() - 1)].name;
            self.writer.failed_column = Some(missing.clone());
            return Err(error("the row has no such field"));
        }
        Ok(())
    }
}

fn is_null_last(b: &Builder) -> bool {
    match b {
        Builder::Str(_, last_null) => *last_null,
        Builder::Int(v) => matches!(v.last(), Some(None)),
        Builder::Float(v) => matches!(v.last(), Some(None)),
        Builder::Bool(v) => matches!(v.last(), Some(None)),
        // A null list is `None` of an `Option<Vec<String>>`, which the data model does not use.
        Builder::List(_) => false,
    }
}

/// One cell, into its column's builder.
struct Cell<'b> {
    builder: &'b mut Builder,
}

impl Cell<'_> {
    fn mismatch(&self, got: &str) -> Error {
        error(format!("expected {}, got {got}", self.builder.expects()))
    }

    fn int(self, v: i64) -> Result<(), Error> {
        match self.builder {
            Builder::Int(cells) => cells.push(Some(v)),
            Builder::Float(cells) => cells.push(Some(v as f64)),
            _ => return Err(self.mismatch("an integer")),
        }
        Ok(())
    }
}

impl<'b> ser::Serializer for Cell<'b> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ListCell<'b>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        match self.builder {
            Builder::Bool(cells) => cells.push(Some(v)),
            _ => return Err(self.mismatch("a boolean")),
        }
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.int(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.int(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.int(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.int(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.int(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.int(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        let v = i64::try_from(v).map_err(|_| error(format!("{v} is not a 64-bit integer")))?;
        self.int(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        match self.builder {
            // As JSON did: a non-finite float is a null.
            Builder::Float(cells) => cells.push(v.is_finite().then_some(v)),
            _ => return Err(self.mismatch("a number")),
        }
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        match self.builder {
            Builder::Str(b, last_null) => {
                b.append_value(v);
                *last_null = false;
            }
            _ => return Err(self.mismatch("a string")),
        }
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(self.mismatch("bytes"))
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.builder.push_null();
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(self.mismatch("an enum variant with data"))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<ListCell<'b>, Error> {
        if !matches!(self.builder, Builder::List(_)) {
            return Err(self.mismatch("a list"));
        }
        Ok(ListCell {
            builder: self.builder,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(self.mismatch("a tuple"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(self.mismatch("a tuple"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(self.mismatch("an enum variant with data"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(self.mismatch("a map"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(self.mismatch("an object"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(self.mismatch("an enum variant with data"))
    }
}

/// A list cell's strings, appended to the list builder at the end.
pub(crate) struct ListCell<'b> {
    builder: &'b mut Builder,
    items: Vec<String>,
}

impl ser::SerializeSeq for ListCell<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        match serde_json::to_value(value)? {
            serde_json::Value::String(s) => {
                self.items.push(s);
                Ok(())
            }
            other => Err(error(format!(
                "expected a list of strings, got item {other}"
            ))),
        }
    }

    fn end(self) -> Result<(), Error> {
        if let Builder::List(l) = self.builder {
            l.append_values_iter(self.items.iter().map(String::as_str));
        }
        Ok(())
    }
}

/// A column's arrays as polars read them (one per chunk), indexed by row without copying
/// the cells out first: a table of 1M rows and 16 columns would otherwise be copied once more
/// (16M cell references) before any row is decoded.
pub(crate) struct Chunks<'df, A> {
    arrays: Vec<&'df A>,
    /// The row after each array's last.
    ends: Vec<usize>,
}

impl<'df, A: StaticArray> Chunks<'df, A> {
    fn of(arrays: impl Iterator<Item = &'df A>) -> Self {
        let arrays: Vec<&A> = arrays.collect();
        let mut end = 0;
        let ends = arrays
            .iter()
            .map(|a| {
                end += a.len();
                end
            })
            .collect();
        Self { arrays, ends }
    }

    /// The array holding `row`, and the row's index in it.
    #[inline]
    fn locate(&self, row: usize) -> (&'df A, usize) {
        if self.arrays.len() == 1 {
            return (self.arrays[0], row);
        }
        let k = self.ends.partition_point(|&e| e <= row);
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        (self.arrays[k], row - start)
    }
}

type StrArray = <StringType as PolarsDataType>::Array;
type I64Array = <Int64Type as PolarsDataType>::Array;
type F64Array = <Float64Type as PolarsDataType>::Array;
type BoolArray = <BooleanType as PolarsDataType>::Array;

/// A column's cells, read row by row as rows are decoded.
pub(crate) enum ColumnCells<'df> {
    Str(Chunks<'df, StrArray>),
    Json(Chunks<'df, StrArray>),
    Int(Chunks<'df, I64Array>),
    Float(Chunks<'df, F64Array>),
    Bool(Chunks<'df, BoolArray>),
    /// Each row's range in the flat values (`None`: a null list), and the values.
    List(Vec<Option<(usize, usize)>>, Vec<Option<&'df str>>),
}

impl<'df> ColumnCells<'df> {
    /// The cells of `column` read as `dtype` (the caller has checked the frame's schema). A
    /// list column's flat values are read from `inner`, which the caller keeps
    /// ([`list_values`]).
    pub(crate) fn read(
        column: &'df Column,
        dtype: DType,
        inner: Option<&'df Series>,
    ) -> PolarsResult<Self> {
        Ok(match dtype {
            DType::Str => ColumnCells::Str(Chunks::of(column.str()?.downcast_iter())),
            DType::Json => ColumnCells::Json(Chunks::of(column.str()?.downcast_iter())),
            DType::Int => ColumnCells::Int(Chunks::of(column.i64()?.downcast_iter())),
            DType::Float => ColumnCells::Float(Chunks::of(column.f64()?.downcast_iter())),
            DType::Bool => ColumnCells::Bool(Chunks::of(column.bool()?.downcast_iter())),
            DType::StrList => {
                // Through the flat values and the offsets, not a Series per row.
                let values: Vec<Option<&str>> = match inner {
                    Some(inner) => inner.str()?.iter().collect(),
                    None => Vec::new(),
                };
                ColumnCells::List(list_ranges(column.list()?), values)
            }
        })
    }

    /// The cell at `row`.
    #[inline]
    fn cell(&self, row: usize) -> CellValue<'_> {
        match self {
            ColumnCells::Str(c) => {
                let (a, i) = c.locate(row);
                CellValue::Str(a.get(i))
            }
            ColumnCells::Json(c) => {
                let (a, i) = c.locate(row);
                CellValue::Json(a.get(i))
            }
            ColumnCells::Int(c) => {
                let (a, i) = c.locate(row);
                CellValue::Int(a.get(i))
            }
            ColumnCells::Float(c) => {
                let (a, i) = c.locate(row);
                CellValue::Float(a.get(i))
            }
            ColumnCells::Bool(c) => {
                let (a, i) = c.locate(row);
                CellValue::Bool(a.get(i))
            }
            ColumnCells::List(ranges, values) => {
                CellValue::List(ranges[row].map(|(start, end)| &values[start..end]))
            }
        }
    }
}

/// A list column made one chunk (its offsets then index one values array), and its flat
/// values, for [`ColumnCells::read`].
pub(crate) fn list_values(column: &Column) -> PolarsResult<(Column, Series)> {
    let lists = column.list()?.rechunk();
    let inner = lists.get_inner();
    Ok((lists.into_owned().into_series().into_column(), inner))
}

/// Each list's range in the flat values of `lists` (one chunk, [`list_values`]), `None` for a
/// null list: through the offsets, not a Series per row.
pub(crate) fn list_ranges(lists: &ListChunked) -> Vec<Option<(usize, usize)>> {
    let mut ranges = Vec::with_capacity(lists.len());
    for arr in lists.downcast_iter() {
        let offsets = arr.offsets();
        let validity = arr.validity();
        for i in 0..arr.len() {
            let valid = validity.is_none_or(|v| v.get_bit(i));
            ranges.push(valid.then(|| offsets.start_end(i)));
        }
    }
    ranges
}

/// Deserialises rows from columns, one row per `deserialize` call.
pub(crate) struct ColumnReader<'c, 'df> {
    pub(crate) columns: &'c [ColumnCells<'df>],
    pub(crate) names: Vec<&'df str>,
    pub(crate) row: usize,
}

impl<'de, 'r, 'c, 'df> de::Deserializer<'de> for &'r mut ColumnReader<'c, 'df> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = visitor.visit_seq(RowCells {
            reader: &mut *self,
            column: 0,
        });
        self.row += 1;
        result
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// A row's cells as a sequence of its fields, in column order.
struct RowCells<'r, 'c, 'df> {
    reader: &'r mut ColumnReader<'c, 'df>,
    column: usize,
}

impl<'de> SeqAccess<'de> for RowCells<'_, '_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let c = self.column;
        if c >= self.reader.columns.len() {
            return Ok(None);
        }
        self.column += 1;
        let cell = self.reader.columns[c].cell(self.reader.row);
        // The error names its column here: the reader runs on a decoding thread of its own.
        seed.deserialize(cell)
            .map(Some)
            .map_err(|e| error(format!("column `{}`: {e}", self.reader.names[c])))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.reader.columns.len() - self.column)
    }
}

/// One cell, as a deserializer for its field.
enum CellValue<'df> {
    Str(Option<&'df str>),
    Json(Option<&'df str>),
    Int(Option<i64>),
    Float(Option<f64>),
    Bool(Option<bool>),
    List(Option<&'df [Option<&'df str>]>),
}

impl CellValue<'_> {
    fn is_null(&self) -> bool {
        match self {
            CellValue::Str(v) | CellValue::Json(v) => v.is_none(),
            CellValue::Int(v) => v.is_none(),
            CellValue::Float(v) => v.is_none(),
            CellValue::Bool(v) => v.is_none(),
            CellValue::List(v) => v.is_none(),
        }
    }
}

impl<'de> de::Deserializer<'de> for CellValue<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            CellValue::Str(Some(s)) => visitor.visit_str(s),
            // Through an owned value: the text borrows from the frame, not from `'de`.
            CellValue::Json(Some(s)) => de::Deserializer::deserialize_any(
                serde_json::from_str::<serde_json::Value>(s)?,
                visitor,
            ),
            CellValue::Int(Some(v)) => visitor.visit_i64(v),
            CellValue::Float(Some(v)) => visitor.visit_f64(v),
            CellValue::Bool(Some(v)) => visitor.visit_bool(v),
            CellValue::List(Some(items)) => visitor.visit_seq(ListItems {
                items: items.iter(),
            }),
            _ => visitor.visit_unit(),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            CellValue::Str(Some(s)) => visitor.visit_enum(s.into_deserializer()),
            CellValue::Json(Some(s)) => de::Deserializer::deserialize_enum(
                serde_json::from_str::<serde_json::Value>(s)?,
                name,
                variants,
                visitor,
            ),
            _ => Err(<Error as de::Error>::custom(format!(
                "expected one of {variants:?}"
            ))),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

/// The strings of a list cell.
struct ListItems<'v, 'df> {
    items: std::slice::Iter<'v, Option<&'df str>>,
}

impl<'de> SeqAccess<'de> for ListItems<'_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.items.next() {
            None => Ok(None),
            Some(Some(s)) => seed
                .deserialize(de::value::StrDeserializer::<Error>::new(s))
                .map(Some),
            Some(None) => seed
                .deserialize(de::value::UnitDeserializer::<Error>::new())
                .map(Some),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}
