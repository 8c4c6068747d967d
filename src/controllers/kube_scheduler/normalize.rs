//! `helper.DefaultNormalizeScore` (`pkg/scheduler/framework/plugins/helper/normalize_score.go`):
//! scores scaled to 0–100 by the highest, with integer division, optionally reversed.

/// The highest score a plugin gives after normalising (`framework.MaxNodeScore`).
pub const MAX_NODE_SCORE: i64 = 100;

/// Scales `scores` so that the highest becomes 100 (`reverse`: 0, and the lowest 100). When
/// every score is 0, they stay 0 (`reverse`: become 100).
pub fn default_normalize(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().max().unwrap_or(0).max(0);
    if max == 0 {
        if reverse {
            scores.iter_mut().for_each(|s| *s = MAX_NODE_SCORE);
        }
        return;
    }
    for score in scores.iter_mut() {
        let scaled = MAX_NODE_SCORE * *score / max;
        *score = if reverse {
            MAX_NODE_SCORE - scaled
        } else {
            scaled
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_by_the_highest_with_integer_division() {
        let mut scores = [30, 100, 70, 1];
        default_normalize(&mut scores, false);
        assert_eq!(scores, [30, 100, 70, 1]);
        let mut scores = [1, 3];
        default_normalize(&mut scores, false);
        assert_eq!(scores, [33, 100]);
        let mut zeros = [0, 0];
        default_normalize(&mut zeros, false);
        assert_eq!(zeros, [0, 0]);
    }
}
