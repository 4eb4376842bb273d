//! First-byte pruning over [`Block64`]: a full 256-entry lookup as one 16-entry lookup per
//! distinct non-zero row (see [`crate::spec::prune`]). The x86 tiers use this; NEON overrides it
//! with `tbl` over four 64-byte quarters.

use super::{Block64, Tail};
use crate::scalar::prune as scalar;
use crate::spec::prune::PruneTable;

/// The x86 row decomposition of a [`PruneTable`], in registers.
struct Rows<B: Block64> {
    row_of_high_nibble: B::Table16,
    rows: [B::Table16; 16],
    numbers: [B; 16],
    n: usize,
}

impl<B: Block64> Rows<B> {
    #[inline(always)]
    unsafe fn new(table: &PruneTable) -> Self {
        // SAFETY (all blocks in this file): the caller runs on a CPU with `B`'s ISA.
        unsafe {
            let zero = B::table16(&[0; 16]);
            let mut rows = Rows {
                row_of_high_nibble: B::table16(&table.row_of_high_nibble),
                rows: [zero; 16],
                numbers: [B::splat(0); 16],
                n: table.n_rows,
            };
            for j in 0..table.n_rows {
                rows.rows[j] = B::table16(&table.rows[j]);
                rows.numbers[j] = B::splat(j as u8 + 1);
            }
            rows
        }
    }

    #[inline(always)]
    unsafe fn lookup(&self, v: B) -> B {
        unsafe {
            let row = B::lookup16(self.row_of_high_nibble, v.high_nibbles());
            let lo = v.low_nibbles();
            let mut acc = B::splat(0);
            for j in 0..self.n {
                acc = acc.or(row.eq(self.numbers[j]).and(B::lookup16(self.rows[j], lo)));
            }
            acc
        }
    }
}

/// Below this many bytes, loading the row tables costs more than the scalar loop saves
/// (`cargo bench --bench kernels -- prune_map_few_rows`: SIMD loses at 64 bytes, wins from 256).
const PRUNE_SHORT: usize = 128;

/// See [`crate::scalar::prune::map`]. The cost grows with the number of distinct rows, so a tier
/// passes the most rows for which this beats one scalar lookup per byte; tables with more rows
/// (and short inputs) take the scalar loop.
///
/// # Safety
/// The CPU supports `B`'s ISA; `out.len() == data.len()`.
#[inline(always)]
pub(crate) unsafe fn map<B: Block64>(
    table: &PruneTable,
    data: &[u8],
    out: &mut [u8],
    max_rows: usize,
) {
    debug_assert_eq!(data.len(), out.len());
    if data.len() < PRUNE_SHORT || table.n_rows > max_rows {
        return scalar::map(table, data, out);
    }
    unsafe {
        let rows = Rows::<B>::new(table);
        let full = data.len() / 64;
        for i in 0..full {
            // SAFETY: block `i < full` lies inside `data`, and inside `out` of the same length.
            let v = B::load(data.as_ptr().add(64 * i));
            rows.lookup(v).store(out.as_mut_ptr().add(64 * i));
        }
        if data.len() > 64 * full {
            let t = Tail::<B>::read(data, full);
            t.store(rows.lookup(t.block), out);
        }
    }
}
