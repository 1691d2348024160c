//! Versions and version ranges as OLM reads them: a bundle's `olm.package` version is
//! semver 2.0, and a `skipRange` is a range of comparators (`>=0.1.0 <0.3.0`),
//! alternatives separated by `||`, the syntax of the Go library OLM parses them with
//! (blang/semver).

use std::cmp::Ordering;

/// A semver 2.0 version. Build metadata is accepted and ignored in comparisons, as
/// semver requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    core: [u64; 3],
    pre: Vec<Identifier>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Identifier {
    // Numeric identifiers sort before alphanumeric ones (semver 11.4.3).
    Numeric(u64),
    Text(String),
}

impl Version {
    /// Parses `major.minor.patch[-pre][+build]`; `None` when it is not semver.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::cli::commands::olm::Version;
    /// assert!(Version::parse("0.10.0").unwrap() > Version::parse("0.9.1").unwrap());
    /// assert!(Version::parse("1.0.0-rc.1").unwrap() < Version::parse("1.0.0").unwrap());
    /// assert!(Version::parse("v1.0").is_none());
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        let (rest, _build) = match text.split_once('+') {
            Some((rest, build)) => (rest, Some(identifiers(build)?)),
            None => (text, None),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((core, pre)) => (core, identifiers(pre)?),
            None => (rest, Vec::new()),
        };
        let numbers: Vec<u64> = core.split('.').map(number).collect::<Option<_>>()?;
        let core: [u64; 3] = numbers.try_into().ok()?;
        let pre = pre
            .into_iter()
            .map(|id| match number(id) {
                Some(n) => Some(Identifier::Numeric(n)),
                // All-digit identifiers with a leading zero are not semver.
                None if id.bytes().all(|b| b.is_ascii_digit()) => None,
                None => Some(Identifier::Text(id.to_owned())),
            })
            .collect::<Option<_>>()?;
        Some(Self { core, pre })
    }
}

/// A decimal number without a leading zero.
fn number(text: &str) -> Option<u64> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    (digits && (text == "0" || !text.starts_with('0')))
        .then(|| text.parse().ok())
        .flatten()
}

/// Dot-separated non-empty `[0-9A-Za-z-]` identifiers.
fn identifiers(text: &str) -> Option<Vec<&str>> {
    let ids: Vec<&str> = text.split('.').collect();
    ids.iter()
        .all(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        .then_some(ids)
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.core.cmp(&other.core).then_with(|| {
            // A pre-release sorts before its release.
            match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&other.pre),
            }
        })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A version range: any of its alternatives, each a conjunction of comparators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range(Vec<Vec<(Comparison, Version)>>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparison {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    Equal,
    NotEqual,
}

impl Range {
    /// Parses a range such as `>=0.1.0 <0.3.0` or `<1.0.0 || >=2.0.0`; `None` when
    /// it is not one.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::cli::commands::olm::{Range, Version};
    /// let range = Range::parse(">=0.1.0 <0.3.0").unwrap();
    /// assert!(range.contains(&Version::parse("0.2.5").unwrap()));
    /// assert!(!range.contains(&Version::parse("0.3.0").unwrap()));
    /// assert!(Range::parse(">=0.1 <0.3").is_none());
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        let alternatives = text
            .split("||")
            .map(|alternative| {
                let comparators: Vec<_> = alternative
                    .split_whitespace()
                    .map(comparator)
                    .collect::<Option<_>>()?;
                (!comparators.is_empty()).then_some(comparators)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self(alternatives))
    }

    /// Whether `version` satisfies the range.
    pub fn contains(&self, version: &Version) -> bool {
        self.0.iter().any(|all| {
            all.iter().all(|(comparison, bound)| {
                let ordering = version.cmp(bound);
                match comparison {
                    Comparison::Less => ordering.is_lt(),
                    Comparison::LessOrEqual => ordering.is_le(),
                    Comparison::Greater => ordering.is_gt(),
                    Comparison::GreaterOrEqual => ordering.is_ge(),
                    Comparison::Equal => ordering.is_eq(),
                    Comparison::NotEqual => ordering.is_ne(),
                }
            })
        })
    }
}

fn comparator(text: &str) -> Option<(Comparison, Version)> {
    // Longest operators first: `>=` before `>`.
    let operators = [
        (">=", Comparison::GreaterOrEqual),
        ("<=", Comparison::LessOrEqual),
        ("!=", Comparison::NotEqual),
        ("==", Comparison::Equal),
        (">", Comparison::Greater),
        ("<", Comparison::Less),
        ("=", Comparison::Equal),
    ];
    let (comparison, version) = operators
        .iter()
        .find_map(|(op, c)| text.strip_prefix(op).map(|rest| (*c, rest)))
        .unwrap_or((Comparison::Equal, text));
    Some((comparison, Version::parse(version)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn versions_follow_semver_precedence() {
        let ordered = [
            "0.1.0",
            "0.2.0-alpha",
            "0.2.0-alpha.1",
            "0.2.0-alpha.beta",
            "0.2.0-beta.2",
            "0.2.0-beta.11",
            "0.2.0",
            "0.10.0",
            "1.0.0",
        ];
        for pair in ordered.windows(2) {
            assert!(v(pair[0]) < v(pair[1]), "{} < {}", pair[0], pair[1]);
        }
        assert_eq!(v("1.0.0+build.5").cmp(&v("1.0.0")), Ordering::Equal);
        for bad in [
            "", "1", "1.0", "01.0.0", "1.0.0-", "1.0.0-01", "1.0.x", "v1.0.0",
        ] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn ranges_hold_what_their_comparators_say() {
        let r = Range::parse("<0.1.0 || >=0.2.0 !=0.3.0").unwrap();
        assert!(r.contains(&v("0.0.9")));
        assert!(!r.contains(&v("0.1.5")));
        assert!(r.contains(&v("0.2.0")));
        assert!(!r.contains(&v("0.3.0")));
        assert!(Range::parse("0.2.0").unwrap().contains(&v("0.2.0")));
        for bad in ["", ">=", ">=0.1 <0.2", "<0.1.0 ||", "~0.1.0"] {
            assert_eq!(Range::parse(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn the_order_is_the_numeric_order_of_the_core(
            a in proptest::array::uniform3(0u64..1000),
            b in proptest::array::uniform3(0u64..1000),
        ) {
            let text = |c: [u64; 3]| format!("{}.{}.{}", c[0], c[1], c[2]);
            prop_assert_eq!(v(&text(a)).cmp(&v(&text(b))), a.cmp(&b));
            let range = Range::parse(&format!(">={} <{}", text(a), text(b))).unwrap();
            prop_assert!(!range.contains(&v(&text(b))));
            prop_assert_eq!(range.contains(&v(&text(a))), a < b);
        }
    }
}
