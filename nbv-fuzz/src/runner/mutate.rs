//! How the runner derives new inputs from the ones it has: byte-level mutations,
//! the target's dictionary of syntax tokens, and splices between inputs.

use super::rng::Rng;

/// Bytes that mean something to most parsers.
const INTERESTING_BYTES: &[u8] = b"\0\xff\x7f\x80\n\r\t \"'\\{}[],:-+*?/=@&#!|~0129aAzZ";
/// Numbers at the edges of the integer types and of the parsers' limits.
const INTERESTING_NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "7",
    "59",
    "60",
    "127",
    "128",
    "255",
    "256",
    "1000",
    "1001",
    "4096",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "1e309",
    "-1e-400",
    "0.1",
    "NaN",
    "inf",
];

/// Derives inputs for one target.
#[derive(Debug)]
pub struct Mutator {
    rng: Rng,
    dictionary: &'static [&'static str],
    max_len: usize,
}

impl Mutator {
    /// A mutator for a target with `dictionary`, making inputs of at most `max_len`
    /// bytes, deterministic from `seed`.
    pub fn new(seed: u64, dictionary: &'static [&'static str], max_len: usize) -> Mutator {
        Mutator {
            rng: Rng::new(seed),
            dictionary,
            max_len,
        }
    }

    /// The generator, for the runner's own choices.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// A new input from `base`, sometimes spliced with an input of `pool`: one to eight
    /// mutations stacked.
    pub fn mutate(&mut self, base: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
        let mut input = base.to_vec();
        let rounds = 1 + self.rng.below(8);
        for _ in 0..rounds {
            self.once(&mut input, pool);
        }
        input.truncate(self.max_len);
        input
    }

    fn token(&mut self) -> Vec<u8> {
        if self.dictionary.is_empty() || self.rng.one_in(4) {
            let number = INTERESTING_NUMBERS[self.rng.below(INTERESTING_NUMBERS.len())];
            return number.as_bytes().to_vec();
        }
        self.dictionary[self.rng.below(self.dictionary.len())]
            .as_bytes()
            .to_vec()
    }

    /// A range of `input`: start and length (at most `max`).
    fn range(&mut self, len: usize, max: usize) -> (usize, usize) {
        let start = self.rng.below(len);
        let size = 1 + self.rng.below(max.min(len - start));
        (start, size)
    }

    fn once(&mut self, input: &mut Vec<u8>, pool: &[Vec<u8>]) {
        let len = input.len();
        let at = self.rng.below(len + 1);
        match self.rng.below(11) {
            // Flip one bit.
            0 if len > 0 => {
                let i = self.rng.below(len);
                input[i] ^= 1 << self.rng.below(8);
            }
            // Set one byte to a byte that means something, or to any byte.
            1 if len > 0 => {
                let i = self.rng.below(len);
                input[i] = if self.rng.one_in(2) {
                    INTERESTING_BYTES[self.rng.below(INTERESTING_BYTES.len())]
                } else {
                    self.rng.next_u64() as u8
                };
            }
            // Insert a few bytes.
            2 => {
                let bytes: Vec<u8> = (0..1 + self.rng.below(4))
                    .map(|_| INTERESTING_BYTES[self.rng.below(INTERESTING_BYTES.len())])
                    .collect();
                input.splice(at..at, bytes);
            }
            // Delete a range.
            3 if len > 0 => {
                let (start, size) = self.range(len, 32);
                input.drain(start..start + size);
            }
            // Insert a token.
            4 | 5 => {
                let token = self.token();
                input.splice(at..at, token);
            }
            // Overwrite with a token.
            6 if len > 0 => {
                let token = self.token();
                let end = (at + token.len()).min(len);
                input.splice(at.min(len)..end, token);
            }
            // Copy a range elsewhere.
            7 if len > 0 => {
                let (start, size) = self.range(len, 64);
                let chunk = input[start..start + size].to_vec();
                input.splice(at..at, chunk);
            }
            // Repeat a range many times: nesting, aliases, long runs.
            8 if len > 0 => {
                let (start, size) = self.range(len, 16);
                let chunk = input[start..start + size].to_vec();
                let most = if self.rng.one_in(4) { 256 } else { 16 };
                let times = 2 + self.rng.below(most);
                let repeated = chunk.repeat(times);
                input.splice(start..start, repeated);
            }
            // Splice: this input's start, another's end.
            9 if !pool.is_empty() => {
                let other = &pool[self.rng.below(pool.len())];
                let from = self.rng.below(other.len() + 1);
                input.truncate(at);
                input.extend_from_slice(&other[from..]);
            }
            // Replace everything after a point with a token (short inputs too).
            _ => {
                let token = self.token();
                input.truncate(at);
                input.extend_from_slice(&token);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs() {
        let pool = vec![b"{\"a\": [1, 2]}".to_vec(), b"x: &a [1]\ny: *a\n".to_vec()];
        let run = |seed| {
            let mut m = Mutator::new(seed, &["&a ", "*a"], 64);
            (0..100)
                .map(|i| m.mutate(&pool[i % 2], &pool))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().all(|input| input.len() <= 64));
    }
}
