//! Sets of work-items of one work-group: which lanes are active at a point of the
//! program. The simulator runs a work-group's work-items in lockstep under such a mask
//! and reads each warp's slice of it for the metrics.

/// A set of lanes `0..len` of a work-group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    words: Vec<u64>,
    len: usize,
}

impl Mask {
    /// No lanes.
    pub fn empty(len: usize) -> Mask {
        Mask {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// Every lane.
    pub fn full(len: usize) -> Mask {
        let mut m = Mask::empty(len);
        for i in 0..len {
            m.set(i);
        }
        m
    }

    /// Lanes of the group.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds lane `i`.
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Whether lane `i` is in the set.
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// No lane in the set.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    /// How many lanes.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Lanes in both.
    pub fn and(&self, other: &Mask) -> Mask {
        self.zip(other, |a, b| a & b)
    }

    /// Lanes in either.
    pub fn or(&self, other: &Mask) -> Mask {
        self.zip(other, |a, b| a | b)
    }

    /// Lanes in `self` but not in `other`.
    pub fn minus(&self, other: &Mask) -> Mask {
        self.zip(other, |a, b| a & !b)
    }

    fn zip(&self, other: &Mask, f: impl Fn(u64, u64) -> u64) -> Mask {
        Mask {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| f(*a, *b))
                .collect(),
            len: self.len,
        }
    }

    /// The lanes, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|i| self.get(*i))
    }

    /// The lanes of `self` for which `f` holds.
    pub fn filter(&self, mut f: impl FnMut(usize) -> bool) -> Mask {
        let mut m = Mask::empty(self.len);
        for i in self.iter() {
            if f(i) {
                m.set(i);
            }
        }
        m
    }

    /// Bits of warp `w` (lanes `w·size … w·size + size − 1`), lane 0 in bit 0.
    pub fn warp_bits(&self, w: usize, size: usize) -> u64 {
        let mut bits = 0;
        for k in 0..size {
            let lane = w * size + k;
            if lane < self.len && self.get(lane) {
                bits |= 1 << k;
            }
        }
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations_and_warp_slices() {
        let full = Mask::full(70);
        let even = full.filter(|i| i % 2 == 0);
        assert_eq!(even.count(), 35);
        assert_eq!(full.minus(&even).count(), 35);
        assert_eq!(even.or(&full), full);
        assert_eq!(even.warp_bits(0, 32), 0x5555_5555);
        assert_eq!(full.warp_bits(2, 32), 0b11_1111, "the last warp is partial");
        assert!(even.and(&full.minus(&even)).is_empty());
    }
}
