//! CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), slicing-by-8: eight 256-entry tables
//! let the loop fold eight bytes per step. Every tier computes this same function.

/// The reflected Castagnoli polynomial.
pub const POLY: u32 = 0x82F6_3B78;

const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut s = 1;
    while s < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
            i += 1;
        }
        s += 1;
    }
    t
}

static TABLES: [[u32; 256]; 8] = make_tables();

/// Continues a CRC-32C: `append(append(0, a), b) == append(0, a ++ b)`, and `append(0, data)`
/// is the standard CRC-32C of `data` (`"123456789"` → `0xE3069283`).
pub fn append(crc: u32, data: &[u8]) -> u32 {
    !update_raw(!crc, data)
}

/// The CRC-32C of each piece (`out.len()` must equal `pieces.len()`).
pub fn many(pieces: &[&[u8]], out: &mut [u32]) {
    assert_eq!(out.len(), pieces.len(), "one CRC per piece");
    for (o, p) in out.iter_mut().zip(pieces) {
        *o = append(0, p);
    }
}

/// The CRC register update without the initial and final inversion.
pub fn update_raw(mut c: u32, data: &[u8]) -> u32 {
    let t = &TABLES;
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let lo = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) ^ c;
        let hi = u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]);
        c = t[7][(lo & 0xFF) as usize]
            ^ t[6][((lo >> 8) & 0xFF) as usize]
            ^ t[5][((lo >> 16) & 0xFF) as usize]
            ^ t[4][(lo >> 24) as usize]
            ^ t[3][(hi & 0xFF) as usize]
            ^ t[2][((hi >> 8) & 0xFF) as usize]
            ^ t[1][((hi >> 16) & 0xFF) as usize]
            ^ t[0][(hi >> 24) as usize];
    }
    for &b in chunks.remainder() {
        c = (c >> 8) ^ t[0][((c ^ b as u32) & 0xFF) as usize];
    }
    c
}
