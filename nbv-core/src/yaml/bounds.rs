//! The bounds check: one pass over the parser's events that counts what the text would
//! become once its aliases are expanded, without expanding anything.
//!
//! An anchored node's size (nodes, bytes, height) is known when it closes; an alias
//! adds its anchor's size in one step. Time is linear in the text and memory is one
//! entry per anchor plus one per open collection (at most [`Limits::max_depth`]).

use std::collections::HashMap;

use serde_saphyr::granit_parser::{ErrorKind, Event, Parser, ScanError, Span, Tag};

use super::Limits;
use super::error::{BoundsError, Position};

/// How far the text passed the bounds.
#[derive(Debug)]
pub(super) struct Scan {
    /// Documents that passed whole.
    pub(super) documents: usize,
    /// Why the check stopped, in document `documents + 1`; `None` when all passed.
    pub(super) stopped: Option<BoundsError>,
}

/// Checks `text` against `limits`.
pub(super) fn scan(text: &str, limits: &Limits) -> Scan {
    if text.len() > limits.max_input_bytes {
        return Scan {
            documents: 0,
            stopped: Some(BoundsError::TooLarge {
                bytes: text.len(),
                max: limits.max_input_bytes,
            }),
        };
    }
    let mut counter = Counter::new(limits.max_depth);
    let stopped = counter.run(text).err();
    Scan {
        documents: counter.documents,
        stopped,
    }
}

/// go-yaml v3's `allowedAliasRatio` and the thresholds it applies it at, in nodes (as
/// go-yaml counts) or in bytes (a copy each in Rust, where Go shares one string).
#[derive(Clone, Copy, Debug)]
struct AliasRule {
    /// No refusal until aliases repeat more than this...
    min_aliased: u64,
    /// ...and the document holds more than this in all.
    min_total: u64,
    /// Up to this total, 99% may come from aliases.
    low: u64,
    /// From this total on, 10% may; in between the share falls linearly.
    high: u64,
}

impl AliasRule {
    /// go-yaml's numbers: 400,000 nodes is about 100 MB of allocations at worst, and
    /// aliases add at most about 400,000 nodes to any document.
    const NODES: AliasRule = AliasRule {
        min_aliased: 100,
        min_total: 1_000,
        low: 400_000,
        high: 4_000_000,
    };
    /// The same shape, ten bytes to a node: aliases add at most about 4 MB of text.
    const BYTES: AliasRule = AliasRule {
        min_aliased: 1_000,
        min_total: 10_000,
        low: 4_000_000,
        high: 40_000_000,
    };

    /// The share of `total` that may come from aliases.
    fn allowed_ratio(self, total: u64) -> f64 {
        if total <= self.low {
            0.99
        } else if total >= self.high {
            0.10
        } else {
            0.99 - 0.89 * ((total - self.low) as f64 / (self.high - self.low) as f64)
        }
    }

    /// Whether `aliased` out of `written + aliased` is too much, as go-yaml decides
    /// "document contains excessive aliasing".
    fn exceeded(self, aliased: u64, written: u64) -> bool {
        let total = written.saturating_add(aliased);
        aliased > self.min_aliased
            && total > self.min_total
            && aliased as f64 / total as f64 > self.allowed_ratio(total)
    }
}

/// What a node amounts to once expanded.
#[derive(Clone, Copy, Debug, Default)]
struct Size {
    nodes: u64,
    bytes: u64,
    /// Collections nested in it, itself included (0 for a scalar).
    height: usize,
}

/// An open sequence or mapping.
#[derive(Debug)]
struct Open {
    /// Its anchor id, 0 for none.
    anchor: usize,
    /// The totals (written and aliased) before it started.
    nodes_before: u64,
    bytes_before: u64,
    /// The greatest height among its children so far.
    children_height: usize,
}

#[derive(Debug)]
struct Counter {
    max_depth: usize,
    /// Documents finished.
    documents: usize,
    written: Size,
    aliased: Size,
    open: Vec<Open>,
    /// Sizes of the anchors defined in this document, by the parser's anchor id.
    anchors: HashMap<usize, Size>,
}

impl Counter {
    fn new(max_depth: usize) -> Self {
        Counter {
            max_depth,
            documents: 0,
            written: Size::default(),
            aliased: Size::default(),
            open: Vec::new(),
            anchors: HashMap::new(),
        }
    }

    fn run(&mut self, text: &str) -> Result<(), BoundsError> {
        let mut options = serde_saphyr::granit_parser::Options::default();
        // The parser's own nesting limits sit just above ours, so that ours reports
        // first and the parser's work stays linear (its per-token work grows with the
        // flow depth).
        options.flow_nesting_limit = self.max_depth.saturating_add(1);
        options.block_nesting_limit = self.max_depth.saturating_add(1);
        // As libyaml (serde_yaml_ng) reads a byte-order mark inside a document.
        options.bom_inside_document_as_content = true;
        options.set_emit_comments(false);
        for item in Parser::new_from_str_with_options(text, options) {
            let (event, span) = item.map_err(|e| self.scan_error(&e))?;
            self.observe(&event, &span)?;
        }
        Ok(())
    }

    fn scan_error(&self, error: &ScanError) -> BoundsError {
        let at = Position {
            line: error.marker().line(),
            column: error.marker().col() + 1,
        };
        match error.kind() {
            ErrorKind::RecursionLimitExceeded => BoundsError::TooDeep {
                at,
                max: self.max_depth,
            },
            _ => BoundsError::Syntax {
                at,
                message: error.info(),
            },
        }
    }

    fn observe(&mut self, event: &Event<'_>, span: &Span) -> Result<(), BoundsError> {
        let at = Position {
            line: span.start.line(),
            column: span.start.col() + 1,
        };
        match event {
            Event::DocumentStart(..) => {
                // go-yaml decodes the document node too.
                self.written.nodes = self.written.nodes.saturating_add(1);
            }
            Event::DocumentEnd => {
                // An alias cannot reach into another document.
                self.anchors.clear();
                self.documents += 1;
            }
            Event::Scalar(value, _, anchor, tag) => {
                let bytes = (value.len() + tag_len(tag.as_deref())) as u64;
                self.add_written(bytes);
                if *anchor != 0 {
                    let size = Size {
                        nodes: 1,
                        bytes,
                        height: 0,
                    };
                    self.anchors.insert(*anchor, size);
                }
            }
            Event::SequenceStart(_, anchor, tag) | Event::MappingStart(_, anchor, tag) => {
                if self.open.len() >= self.max_depth {
                    return Err(BoundsError::TooDeep {
                        at,
                        max: self.max_depth,
                    });
                }
                self.open.push(Open {
                    anchor: *anchor,
                    nodes_before: self.total_nodes(),
                    bytes_before: self.total_bytes(),
                    children_height: 0,
                });
                self.add_written(tag_len(tag.as_deref()) as u64);
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(closed) = self.open.pop() else {
                    return Ok(());
                };
                let height = closed.children_height + 1;
                self.child_of_open(height);
                if closed.anchor != 0 {
                    let size = Size {
                        nodes: self.total_nodes().saturating_sub(closed.nodes_before),
                        bytes: self.total_bytes().saturating_sub(closed.bytes_before),
                        height,
                    };
                    self.anchors.insert(closed.anchor, size);
                }
            }
            Event::Alias(anchor) => {
                // The alias node itself, as go-yaml counts it, then what it repeats.
                self.add_written(0);
                let Some(size) = self.anchors.get(anchor).copied() else {
                    return Err(BoundsError::RecursiveAlias { at });
                };
                if self.open.len() + size.height > self.max_depth {
                    return Err(BoundsError::TooDeep {
                        at,
                        max: self.max_depth,
                    });
                }
                self.child_of_open(size.height);
                self.aliased.nodes = self.aliased.nodes.saturating_add(size.nodes);
                self.aliased.bytes = self.aliased.bytes.saturating_add(size.bytes);
            }
            _ => {}
        }
        self.check_aliasing(at)
    }

    fn add_written(&mut self, bytes: u64) {
        self.written.nodes = self.written.nodes.saturating_add(1);
        self.written.bytes = self.written.bytes.saturating_add(bytes);
    }

    /// A child of `height` ends (or an alias of it appears) in the innermost open
    /// collection.
    fn child_of_open(&mut self, height: usize) {
        if let Some(parent) = self.open.last_mut() {
            parent.children_height = parent.children_height.max(height);
        }
    }

    fn total_nodes(&self) -> u64 {
        self.written.nodes.saturating_add(self.aliased.nodes)
    }

    fn total_bytes(&self) -> u64 {
        self.written.bytes.saturating_add(self.aliased.bytes)
    }

    /// go-yaml checks after every node it decodes; so does this, over the whole text
    /// (a stream of documents is one budget, since nbv keeps all its documents).
    fn check_aliasing(&self, at: Position) -> Result<(), BoundsError> {
        if AliasRule::NODES.exceeded(self.aliased.nodes, self.written.nodes) {
            return Err(BoundsError::ExcessiveAliasing {
                at,
                aliased: self.aliased.nodes,
                written: self.written.nodes,
            });
        }
        if AliasRule::BYTES.exceeded(self.aliased.bytes, self.written.bytes) {
            return Err(BoundsError::ExcessiveAliasedText {
                at,
                aliased: self.aliased.bytes,
                written: self.written.bytes,
            });
        }
        Ok(())
    }
}

/// The bytes of a tag as written in full (`tag:yaml.org,2002:str`): serde_yaml_ng keeps
/// it with each copy of a tagged value.
fn tag_len(tag: Option<&Tag>) -> usize {
    tag.map_or(0, |tag| {
        let (handle, suffix) = tag.parts();
        handle.len() + suffix.len()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_go_yamls() {
        let rule = AliasRule::NODES;
        assert_eq!(rule.allowed_ratio(1_000), 0.99);
        assert_eq!(rule.allowed_ratio(400_000), 0.99);
        assert!((rule.allowed_ratio(2_200_000) - 0.545).abs() < 1e-9);
        assert_eq!(rule.allowed_ratio(4_000_000), 0.10);
        assert_eq!(rule.allowed_ratio(u64::MAX), 0.10);
        // Small documents may alias freely, as in go-yaml.
        assert!(!rule.exceeded(100, 1));
        assert!(!rule.exceeded(990, 5));
        // 99 aliased nodes to one written: exactly the limit.
        assert!(!rule.exceeded(99_000, 1_000));
        assert!(rule.exceeded(99_100, 1_000));
        // Large documents: 10%.
        assert!(!rule.exceeded(500_000, 4_500_000));
        assert!(rule.exceeded(600_000, 4_500_000));
    }

    fn counted(text: &str) -> Counter {
        let mut counter = Counter::new(128);
        counter.run(text).unwrap();
        counter
    }

    #[test]
    fn aliases_add_their_anchors_size() {
        // Document node, mapping, 4 scalars, a sequence of 2 scalars, 1 alias.
        let counter = counted("a: &x [b, c]\nd: *x\n");
        assert_eq!(counter.written.nodes, 1 + 1 + 4 + 1 + 1);
        assert_eq!((counter.aliased.nodes, counter.aliased.bytes), (3, 2));
        // Nested aliases count what they repeat, at every level.
        let counter = counted("- &a [x, y]\n- &b [*a, *a]\n- [*b, *b]\n");
        // *b repeats [ [x,y], [x,y] ] = 1 + 2 alias nodes + 2*3 = 9 nodes.
        assert_eq!(counter.aliased.nodes, 3 + 3 + 9 + 9);
        assert_eq!(counter.aliased.bytes, 2 + 2 + 4 + 4);
    }

    #[test]
    fn aliases_count_toward_depth() {
        let nested = format!("a: &x {}{}\nb: [*x]\n", "[".repeat(127), "]".repeat(127));
        let mut counter = Counter::new(128);
        assert!(matches!(
            counter.run(&nested),
            Err(BoundsError::TooDeep { max: 128, .. })
        ));
        let fits = format!("a: &x {}{}\nb: *x\n", "[".repeat(127), "]".repeat(127));
        assert!(Counter::new(128).run(&fits).is_ok());
    }

    #[test]
    fn a_recursive_alias_is_refused() {
        let mut counter = Counter::new(128);
        assert!(matches!(
            counter.run("a: &x [*x]"),
            Err(BoundsError::RecursiveAlias { .. })
        ));
    }
}
