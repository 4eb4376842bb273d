//! Alignment between two tokenizations of one text (issue 26), as the `tokenizations` crate does
//! it: lowercase and NFKD each token, a shortest edit script between the two character
//! sequences, and the token maps that follow from it. Empty until that issue lands.
