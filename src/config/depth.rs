//! How deeply YAML text nests, found in one pass before the YAML parser sees it.
//!
//! The parser's time grows with the square of the nesting depth (100 000 levels of `[`
//! take half a minute), and no configuration file needs more than a handful of levels.
//! This scan counts levels from the text alone: block collections by indentation (and
//! the `- ` and `? ` indicators that open one on the same line), flow collections by
//! their brackets, skipping quoted scalars, comments and block scalars (`|`, `>`). It
//! may count a level that the parser would not (a plain scalar continued on a deeper
//! line) but never misses one, so with [`MAX_DEPTH`] far above what the schemas need,
//! valid files pass and deep ones are refused in linear time.

/// Nesting levels a configuration file may have; the sensor schema needs six.
pub const MAX_DEPTH: usize = 32;

/// Where the text first nests deeper than [`MAX_DEPTH`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the YAML nests deeper than {MAX_DEPTH} levels here (collections inside collections); \
     configuration files need only a few"
)]
pub struct TooDeep {
    pub line: usize,
    pub column: usize,
}

/// The first place `text` nests deeper than [`MAX_DEPTH`], if any.
pub fn nesting_error(text: &str) -> Option<TooDeep> {
    let mut scan = Scan::default();
    for (i, line) in text.lines().enumerate() {
        if let Some(byte) = scan.line(line.as_bytes()) {
            let column = line.get(..byte).map_or(byte, |p| p.chars().count()) + 1;
            return Some(TooDeep {
                line: i + 1,
                column,
            });
        }
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    Single,
    Double,
}

/// The scanner's state between lines.
#[derive(Default)]
struct Scan {
    /// Columns of the open block collections.
    indents: Vec<usize>,
    /// Open flow collections (`[`, `{`).
    flow: usize,
    /// Inside a quoted scalar that continues on the next line.
    quote: Option<Quote>,
    /// Inside a block scalar: its lines are indented deeper than this column.
    block_scalar: Option<usize>,
}

impl Scan {
    /// Scans one line; the byte offset where the depth first exceeds the bound.
    fn line(&mut self, b: &[u8]) -> Option<usize> {
        let indent = b.iter().take_while(|&&c| c == b' ').count();
        let blank = b[indent..].iter().all(|c| c.is_ascii_whitespace());
        if let Some(parent) = self.block_scalar {
            if blank || indent > parent {
                return None;
            }
            self.block_scalar = None;
        }
        let mut i = 0;
        if self.quote.is_none() && self.flow == 0 {
            if blank || b[indent] == b'#' {
                return None;
            }
            if b.starts_with(b"---") || b.starts_with(b"...") {
                self.indents.clear();
                i = 3;
            } else {
                self.open_block(indent);
                i = indent;
            }
        }
        self.rest(b, i)
    }

    /// A block collection at `column`: the deeper ones it ends are closed.
    fn open_block(&mut self, column: usize) {
        while self.indents.last().is_some_and(|&c| c > column) {
            self.indents.pop();
        }
        if self.indents.last() != Some(&column) {
            self.indents.push(column);
        }
    }

    fn depth(&self) -> usize {
        self.indents.len() + self.flow
    }

    /// Scans a line from byte `i` on: quotes, comments, brackets, indicators.
    fn rest(&mut self, b: &[u8], mut i: usize) -> Option<usize> {
        // A node (collection or quoted scalar) may start here.
        let mut node_start = true;
        while i < b.len() {
            if let Some(q) = self.quote {
                i = self.close_quote(b, i, q);
                node_start = false;
                continue;
            }
            let c = b[i];
            let next_blank = b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
            match c {
                b' ' | b'\t' => {}
                b'#' if i == 0 || b[i - 1].is_ascii_whitespace() => return None,
                b'[' | b'{' if node_start || self.flow > 0 => {
                    self.flow += 1;
                    if self.depth() > MAX_DEPTH {
                        return Some(i);
                    }
                    node_start = true;
                }
                b']' | b'}' if self.flow > 0 => {
                    self.flow -= 1;
                    node_start = false;
                }
                b',' if self.flow > 0 => node_start = true,
                b'\'' | b'"' if node_start => {
                    self.quote = Some(if c == b'"' {
                        Quote::Double
                    } else {
                        Quote::Single
                    });
                    i += 1;
                    continue;
                }
                b'-' | b'?' if node_start && self.flow == 0 && next_blank => {
                    // `- ` and `? ` open a collection whose content starts further on.
                    self.open_block(i + 2);
                    if self.depth() > MAX_DEPTH {
                        return Some(i);
                    }
                }
                b':' if next_blank || self.flow > 0 => node_start = true,
                b'|' | b'>' if node_start && self.flow == 0 => {
                    self.block_scalar = Some(self.indents.last().copied().unwrap_or(0));
                    return None;
                }
                b'&' | b'!' if node_start => {
                    // An anchor or tag comes before the node it names.
                    while i < b.len() && !b[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    continue;
                }
                _ => node_start = false,
            }
            i += 1;
        }
        if self.depth() > MAX_DEPTH {
            return Some(b.len());
        }
        None
    }

    /// Skips to just past the closing quote of `q` from byte `i` (or to the line's end
    /// if the scalar goes on).
    fn close_quote(&mut self, b: &[u8], mut i: usize, q: Quote) -> usize {
        while i < b.len() {
            match (q, b[i]) {
                (Quote::Double, b'\\') => i += 2,
                (Quote::Double, b'"') => {
                    self.quote = None;
                    return i + 1;
                }
                // '' is a quote inside a single-quoted scalar.
                (Quote::Single, b'\'') if b.get(i + 1) == Some(&b'\'') => i += 2,
                (Quote::Single, b'\'') => {
                    self.quote = None;
                    return i + 1;
                }
                _ => i += 1,
            }
        }
        b.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested_flow(levels: usize) -> String {
        format!("a: {}1{}\n", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn flow_nesting_is_counted_up_to_the_bound() {
        // One level for the top mapping, the rest for the brackets.
        assert_eq!(nesting_error(&nested_flow(MAX_DEPTH - 1)), None);
        let e = nesting_error(&nested_flow(MAX_DEPTH)).unwrap();
        assert_eq!((e.line, e.column), (1, 4 + MAX_DEPTH - 1));
    }

    #[test]
    fn block_nesting_by_indentation_and_dashes() {
        let deep: String = (0..MAX_DEPTH)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect();
        assert_eq!(nesting_error(&deep), None);
        let deeper = format!("{deep}{}x: 1\n", "  ".repeat(MAX_DEPTH));
        assert_eq!(nesting_error(&deeper).map(|e| e.line), Some(MAX_DEPTH + 1));
        let dashes = format!("{}x\n", "- ".repeat(MAX_DEPTH + 1));
        assert_eq!(nesting_error(&dashes).map(|e| e.line), Some(1));
    }

    #[test]
    fn brackets_in_strings_comments_and_block_scalars_do_not_count() {
        let many = "[".repeat(10 * MAX_DEPTH);
        let text = format!(
            "a: \"{many}\"\nb: '{many}''{many}'\nc: x # {many}\nd: |\n  {many}\n\n  {many}\n\
             e: plain{many}\nf: [\"]\", '[', \"{many}\"]\n"
        );
        assert_eq!(nesting_error(&text), None);
    }

    #[test]
    fn flow_collections_across_lines_and_dedents_close_levels() {
        let text = "a:\n  b:\n    c: [1,\n  2, {x: [3]}]\nd: 4\n";
        assert_eq!(nesting_error(text), None);
        let mut s = Scan::default();
        for l in text.lines() {
            s.line(l.as_bytes());
        }
        assert_eq!((s.indents.len(), s.flow), (1, 0));
    }

    #[test]
    fn the_sensor_examples_pass() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        let mut files = vec![dir.join("materials.yaml")];
        for e in std::fs::read_dir(dir.join("sensors")).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "yaml") {
                files.push(e.path());
            }
        }
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            assert_eq!(nesting_error(&text), None, "{}", f.display());
        }
    }
}
