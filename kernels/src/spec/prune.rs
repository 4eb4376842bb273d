//! First-byte pruning tables: a value per byte value (for example "the longest vocabulary piece
//! that starts with this byte", 0 = no piece starts here), derived per ISA for vector lookups.
//!
//! A full 256-entry byte → byte lookup is where the shuffle instructions differ most:
//! - **x86** (`pshufb`, 16-entry tables): the high nibble picks a *row* of 16 values. Rows that
//!   are equal are stored once, and a first lookup maps the high nibble to its row number, so the
//!   cost is one `pshufb` + compare per *distinct non-zero row* rather than per row (vocabularies
//!   give few distinct rows: all continuation bytes alike, most lead bytes alike).
//! - **AArch64** (`tbl` with four registers looks up 64 entries and returns 0 for any index ≥ 64):
//!   four lookups of the raw table, with the index lowered by 0, 64, 128 and 192, OR-ed together.
//!   No derivation is needed beyond the table itself.
//!
//! Finding the next position with a non-zero value needs only membership, so the table also
//! carries a [`ByteSet`] of the bytes with a non-zero value.

use super::byte_set::ByteSet;

/// A byte → byte table compiled for the pruning kernels.
#[derive(Clone, PartialEq, Eq)]
pub struct PruneTable {
    /// The values, indexed by byte: the scalar table, and the AArch64 `tbl` table as it is.
    pub(crate) values: [u8; 256],
    /// x86: row number (1-based; 0 = the row is all zeros) of each high nibble.
    pub(crate) row_of_high_nibble: [u8; 16],
    /// x86: the distinct non-zero rows, numbered from 1.
    pub(crate) rows: [[u8; 16]; 16],
    pub(crate) n_rows: usize,
    /// The bytes whose value is non-zero.
    pub(crate) nonzero: ByteSet,
}

impl PruneTable {
    /// Compiles a table of one value per byte value.
    pub fn new(values: [u8; 256]) -> PruneTable {
        let mut rows = [[0u8; 16]; 16];
        let mut n_rows = 0;
        let mut row_of_high_nibble = [0u8; 16];
        for (h, slot) in row_of_high_nibble.iter_mut().enumerate() {
            let mut row = [0u8; 16];
            row.copy_from_slice(&values[h * 16..h * 16 + 16]);
            if row == [0; 16] {
                continue;
            }
            let number = match rows[..n_rows].iter().position(|r| *r == row) {
                Some(i) => i,
                None => {
                    rows[n_rows] = row;
                    n_rows += 1;
                    n_rows - 1
                }
            };
            *slot = (number + 1) as u8;
        }
        PruneTable {
            values,
            row_of_high_nibble,
            rows,
            n_rows,
            nonzero: ByteSet::from_fn(|b| values[b as usize] != 0),
        }
    }

    /// The value of one byte.
    #[inline]
    pub fn value(&self, byte: u8) -> u8 {
        self.values[byte as usize]
    }

    /// The whole table, indexed by byte value.
    pub fn values(&self) -> &[u8; 256] {
        &self.values
    }

    /// How many distinct non-zero rows the x86 lookup evaluates (0..=16).
    pub fn distinct_rows(&self) -> usize {
        self.n_rows
    }
}

impl std::fmt::Debug for PruneTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PruneTable")
            .field("distinct_rows", &self.n_rows)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_rows_are_stored_once() {
        let mut values = [0u8; 256];
        values[0x80..0xC0].fill(3);
        values[b'a' as usize] = 7;
        let t = PruneTable::new(values);
        assert_eq!(t.distinct_rows(), 2);
        assert_eq!(t.row_of_high_nibble[0x8], t.row_of_high_nibble[0xB]);
        assert_eq!(t.row_of_high_nibble[0x0], 0);
        assert_eq!(t.value(b'a'), 7);
    }
}
