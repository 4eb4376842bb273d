//! First-byte pruning, one table lookup per byte.

use crate::spec::prune::PruneTable;

/// `out[i] = table.value(data[i])` (`out.len()` must equal `data.len()`).
pub fn map(table: &PruneTable, data: &[u8], out: &mut [u8]) {
    assert_eq!(out.len(), data.len(), "one output byte per input byte");
    for (o, &b) in out.iter_mut().zip(data) {
        *o = table.values[b as usize];
    }
}
