//! The corpus tests — inputs (paths, compression, Parquet, separated texts, bad records),
//! dataset outputs (Megatron, datatrove, llm.c, flat arrays with their index), document
//! boundaries, shards and resumed runs — in one test binary: each as a binary of its own cost
//! the test command's build a link of its own (about half a minute in all on two cores).

#[path = "../common/cli.rs"]
mod cli;
#[path = "../common/datasets.rs"]
mod datasets;

mod corpus_inputs;
mod datatrove;
mod document_boundaries;
mod flat_index;
mod llmc;
mod megatron;
mod parquet_encode;
mod parquet_input;
mod resume;
mod shards;
mod skip_bad;
mod text_separator;
