//! ISA-independent definitions: what the kernels compute, and the tables they compute it from.

pub mod byte_class;
pub mod byte_set;
pub mod double_array;
pub mod prune;
pub mod space_escape;
