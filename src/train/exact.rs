//! The exact optimal search for the best merge sequence on tiny inputs (being written).
