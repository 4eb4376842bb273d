//! `simdtok report`: the CPU-feature comparison report. One machine's run
//! ([`gather::gather`]) measures every kernel family and every model's encode on every tier the
//! CPU supports and writes `report.json` ([`schema`]), `report.md`, `report.svg` and
//! `report.html`; [`compare`] merges reports from several machines into the same four files.

pub mod chart;
pub mod compare;
pub mod doc;
pub mod files;
pub mod gather;
pub mod schema;
pub mod view;
