//! The bound on a vocabulary's ids. Models keep tables indexed by id (a token's bytes or
//! string, a merge queue's slot per rank), so an id of four billion in a file of a few thousand
//! tokens would ask for gigabytes and abort the process on the allocation. Real vocabularies
//! are dense: where they have gaps at all, the gaps are a few ids. A file whose ids reach
//! further is refused with the id it names.

/// How far past the number of entries an id may reach.
pub const ID_SLACK: usize = 1 << 20;

/// Checks that every one of `ids` is below `entries + ID_SLACK`; `what` names them in the error
/// ("rank", "id", …).
pub fn check_dense_ids(
    ids: impl IntoIterator<Item = u32>,
    entries: usize,
    what: &str,
) -> Result<(), String> {
    let limit = entries.saturating_add(ID_SLACK);
    match ids.into_iter().find(|&id| id as usize >= limit) {
        Some(id) => Err(format!(
            "{what} {id} is far past the {entries} entries of the vocabulary: simdtok keeps \
             tables indexed by {what}, so {what}s must stay below {limit}"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_up_to_the_slack_pass() {
        assert!(check_dense_ids([0, 5, 9], 10, "id").is_ok());
        assert!(check_dense_ids([(10 + ID_SLACK - 1) as u32], 10, "id").is_ok());
        let e = check_dense_ids([3, (10 + ID_SLACK) as u32], 10, "rank").unwrap_err();
        assert!(e.contains(&format!("rank {}", 10 + ID_SLACK)), "{e}");
        assert!(check_dense_ids([u32::MAX], usize::MAX, "id").is_ok());
    }
}
