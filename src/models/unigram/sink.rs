//! Where a segmentation goes: whole segments (byte ranges and ids, for offsets and pieces) or
//! the ids alone, written as the pass finds them.
//!
//! The ids-only path (`encode_ids_into`, what batch encoding calls) used to collect segments of
//! twelve bytes and copy their ids out in a second pass; [`IdSink`] writes each id once, and
//! keeps aside only the segments of the unknown piece, which the pipeline still needs (a run of
//! them merges; with byte fallback each becomes its bytes).

use super::Segment;

/// Takes a segmentation's pieces in order.
pub trait SegmentSink {
    fn push(&mut self, seg: Segment);
}

impl SegmentSink for Vec<Segment> {
    #[inline(always)]
    fn push(&mut self, seg: Segment) {
        Vec::push(self, seg);
    }
}

/// A segment of the unknown piece, and where its id went among the ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownAt {
    pub index: usize,
    pub seg: Segment,
}

/// Appends ids to a vector, and sets aside each segment of the unknown piece `unk`.
pub struct IdSink<'a> {
    ids: &'a mut Vec<u32>,
    unk: u32,
    unknowns: &'a mut Vec<UnknownAt>,
}

impl<'a> IdSink<'a> {
    /// A sink appending to `ids`, with `unknowns` cleared for the unknown pieces.
    pub fn new(ids: &'a mut Vec<u32>, unk: u32, unknowns: &'a mut Vec<UnknownAt>) -> IdSink<'a> {
        unknowns.clear();
        IdSink { ids, unk, unknowns }
    }

    /// Pushes every segment of `segs`, in order: the ids in one pass with no branch per
    /// segment (a push per segment, with its capacity check, was 5 % of English), and the
    /// unknown pieces in a second one only when there is one.
    pub fn push_all(&mut self, segs: &[Segment]) {
        let first = self.ids.len();
        let unk = self.unk;
        let mut any_unk = false;
        self.ids.extend(segs.iter().map(|seg| {
            any_unk |= seg.id == unk;
            seg.id
        }));
        if any_unk {
            self.unknowns.extend(
                segs.iter()
                    .enumerate()
                    .filter(|(_, seg)| seg.id == unk)
                    .map(|(i, &seg)| UnknownAt {
                        index: first + i,
                        seg,
                    }),
            );
        }
    }
}

impl SegmentSink for IdSink<'_> {
    #[inline(always)]
    fn push(&mut self, seg: Segment) {
        if seg.id == self.unk {
            self.unknowns.push(UnknownAt {
                index: self.ids.len(),
                seg,
            });
        }
        self.ids.push(seg.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(start: u32, end: u32, id: u32) -> Segment {
        Segment { start, end, id }
    }

    #[test]
    fn unknown_pieces_are_set_aside_with_their_index_one_by_one_or_all_at_once() {
        let segs = [seg(0, 3, 5), seg(3, 4, 0), seg(4, 6, 0), seg(6, 9, 7)];
        let want = vec![
            UnknownAt {
                index: 4,
                seg: segs[1],
            },
            UnknownAt {
                index: 5,
                seg: segs[2],
            },
        ];
        let (mut one, mut all) = (vec![9, 9], vec![9, 9]);
        let (mut one_unk, mut all_unk) = (vec![], vec![]);
        let mut sink = IdSink::new(&mut one, 0, &mut one_unk);
        sink.push(seg(9, 9, 1));
        for &s in &segs {
            sink.push(s);
        }
        let mut sink = IdSink::new(&mut all, 0, &mut all_unk);
        sink.push_all(&[seg(9, 9, 1)]);
        sink.push_all(&segs);
        assert_eq!(one, [9, 9, 1, 5, 0, 0, 7]);
        assert_eq!(all, one);
        assert_eq!(one_unk, want);
        assert_eq!(all_unk, want);
    }
}
