//! [`Columns`]: reading one row's columns through the dialect, where a value that does not decode
//! (or an unexpected `NULL`) is [`StoreError::Corrupt`] naming `table.column`.

use crate::dialect::{Dialect, Row};
use svc_store::StoreError;
use time::OffsetDateTime;

/// A column type the shared repositories read; each maps onto one [`Dialect`] getter.
pub trait Value: Sized {
    /// Reads `column` of `row`.
    fn read<D: Dialect>(row: &Row<D>, column: &str) -> Result<Self, sqlx::Error>;
}

fn required<T>(value: Option<T>) -> Result<T, sqlx::Error> {
    value.ok_or_else(|| sqlx::Error::Decode("unexpected NULL".into()))
}

macro_rules! value {
    ($ty:ty, $getter:ident) => {
        impl Value for $ty {
            fn read<D: Dialect>(row: &Row<D>, column: &str) -> Result<Self, sqlx::Error> {
                required(D::$getter(row, column)?)
            }
        }

        impl Value for Option<$ty> {
            fn read<D: Dialect>(row: &Row<D>, column: &str) -> Result<Self, sqlx::Error> {
                D::$getter(row, column)
            }
        }
    };
}

value!(String, text);
value!(i64, int);
value!(bool, boolean);
value!(Vec<u8>, bytes);
value!(OffsetDateTime, time);

/// The columns of one row of `table`.
pub struct Columns<'r, D: Dialect> {
    row: &'r Row<D>,
    table: &'static str,
}

impl<'r, D: Dialect> Columns<'r, D> {
    /// The columns of `row`, read from `table` (for error messages).
    pub fn new(row: &'r Row<D>, table: &'static str) -> Self {
        Self { row, table }
    }

    /// Reads `column`.
    pub fn get<T: Value>(&self, column: &str) -> Result<T, StoreError> {
        T::read::<D>(self.row, column).map_err(|e| self.corrupt(column, e))
    }

    /// Reads the JSON column `column` as its text.
    pub fn json(&self, column: &str) -> Result<String, StoreError> {
        D::json(self.row, column)
            .and_then(required)
            .map_err(|e| self.corrupt(column, e))
    }

    /// Reads `column`, an instant computed for comparison (see [`Dialect::instant`]).
    pub fn instant(&self, column: &str) -> Result<Option<OffsetDateTime>, StoreError> {
        D::instant(self.row, column).map_err(|e| self.corrupt(column, e))
    }

    fn corrupt(&self, column: &str, err: sqlx::Error) -> StoreError {
        StoreError::Corrupt(format!("{}.{column}: {err}", self.table))
    }
}
