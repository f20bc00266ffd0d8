//! Typed values of a system file's fields that a file spells as text: a
//! size (`8TB`, `32G`, `4K`), a pool layout (`3xraidz2-8`) and a link
//! (`2x10G`). A file's text
//! is kept as written and parsed when the system is resolved, so a bad value
//! is reported with its field's name; a program hands over the value itself
//! (bytes, a [`Shape`]) and nothing is turned into text to be parsed back.
//! Both are written back as a file spells them: a program's bytes as their
//! digits, a shape as its name.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zfs_model::error::ModelError;
use zfs_model::layout::Shape;
use zfs_model::network::Link;
use zfs_model::units::{parse_size, SizeMeaning};

/// A size: as a system file writes it, or a byte count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Size {
    /// As written in a file (`8TB`, `32G`, `4K`, `0`).
    Text(String),
    /// Handed over by a program, exact.
    Bytes(u64),
}

impl Size {
    /// The size in bytes, a file's text read with `meaning` (a disk's
    /// marketed capacity, or exact).
    pub fn bytes(&self, meaning: SizeMeaning) -> Result<u64, ModelError> {
        match self {
            Size::Text(t) => parse_size(t, meaning),
            // As a file's "0" is refused.
            Size::Bytes(0) => Err(ModelError::InvalidSize {
                input: "0".into(),
                reason: "size must be greater than zero".into(),
            }),
            Size::Bytes(n) => Ok(*n),
        }
    }

    /// Zero, as a field that takes `0` for "none" (a client's page cache)
    /// reads it.
    pub fn is_zero(&self) -> bool {
        match self {
            Size::Text(t) => t.trim() == "0",
            Size::Bytes(n) => *n == 0,
        }
    }
}

impl From<u64> for Size {
    fn from(n: u64) -> Size {
        Size::Bytes(n)
    }
}

impl From<&str> for Size {
    fn from(t: &str) -> Size {
        Size::Text(t.to_string())
    }
}

impl From<String> for Size {
    fn from(t: String) -> Size {
        Size::Text(t)
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Text(t) => f.write_str(t),
            Size::Bytes(n) => write!(f, "{n}"),
        }
    }
}

/// As a file would spell it.
impl PartialEq<&str> for Size {
    fn eq(&self, other: &&str) -> bool {
        match self {
            Size::Text(t) => t == other,
            Size::Bytes(n) => other.parse::<u64>().is_ok_and(|o| o == *n),
        }
    }
}

/// Written as a file spells it: the text, or the bytes' digits.
impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A string as written, or an integer as bytes.
impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Spelled {
            Text(String),
            Bytes(u64),
        }
        Ok(
            match Spelled::deserialize(d).map_err(|_| {
                serde::de::Error::custom(
                    "expected a size: a string such as \"8TB\" or \"4K\", or a byte count",
                )
            })? {
                Spelled::Text(t) => Size::Text(t),
                Spelled::Bytes(n) => Size::Bytes(n),
            },
        )
    }
}

/// A pool layout: as a system file writes it, or a [`Shape`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// As written in a file (`3xraidz2-8`, `mirror`).
    Text(String),
    /// Handed over by a program.
    Shape(Shape),
}

impl Layout {
    /// The shape, a file's text parsed by zfs-model's layout parser.
    pub fn shape(&self) -> Result<Shape, ModelError> {
        match self {
            Layout::Text(t) => Shape::parse(t),
            Layout::Shape(s) => Ok(*s),
        }
    }
}

impl From<Shape> for Layout {
    fn from(s: Shape) -> Layout {
        Layout::Shape(s)
    }
}

impl From<&str> for Layout {
    fn from(t: &str) -> Layout {
        Layout::Text(t.to_string())
    }
}

impl From<String> for Layout {
    fn from(t: String) -> Layout {
        Layout::Text(t)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layout::Text(t) => f.write_str(t),
            Layout::Shape(s) => f.write_str(&s.name()),
        }
    }
}

/// As a file would spell it (a shape by its name).
impl PartialEq<&str> for Layout {
    fn eq(&self, other: &&str) -> bool {
        match self {
            Layout::Text(t) => t == other,
            Layout::Shape(s) => s.name() == *other,
        }
    }
}

impl Serialize for Layout {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Layout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Layout, D::Error> {
        String::deserialize(d).map(Layout::Text)
    }
}

/// A link: as a system file writes it (`[COUNTx]RATE` as `plan --link`
/// takes it, or `none`), or a zfs-model [`Link`].
#[derive(Debug, Clone, PartialEq)]
pub enum LinkRate {
    /// As written in a file.
    Text(String),
    /// Handed over by a program.
    Link(Link),
}

impl LinkRate {
    /// The link (`None` for `none` or `local`), a file's text read by
    /// zfs-model's link parser (the plan's rates).
    pub fn link(&self) -> Result<Option<Link>, ModelError> {
        match self {
            LinkRate::Text(t) => Link::parse(t),
            LinkRate::Link(l) => Ok(Some(*l)),
        }
    }
}

impl From<Link> for LinkRate {
    fn from(l: Link) -> LinkRate {
        LinkRate::Link(l)
    }
}

impl From<&str> for LinkRate {
    fn from(t: &str) -> LinkRate {
        LinkRate::Text(t.to_string())
    }
}

impl fmt::Display for LinkRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkRate::Text(t) => f.write_str(t),
            LinkRate::Link(l) => f.write_str(&l.name()),
        }
    }
}

impl PartialEq<&str> for LinkRate {
    fn eq(&self, other: &&str) -> bool {
        match self {
            LinkRate::Text(t) => t == other,
            LinkRate::Link(l) => l.name() == *other,
        }
    }
}

impl Serialize for LinkRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for LinkRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LinkRate, D::Error> {
        String::deserialize(d).map(LinkRate::Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Doc {
        size: Size,
        layout: Layout,
    }

    #[test]
    fn a_file_reads_and_writes_back_as_it_was_spelled() {
        let text = "size = \"8TB\"\nlayout = \"3xraidz2-8\"\n";
        let d: Doc = toml::from_str(text).unwrap();
        assert_eq!(d.size, Size::Text("8TB".into()));
        assert_eq!(toml::to_string(&d).unwrap(), text);
        let n: Doc = toml::from_str("size = 4096\nlayout = \"mirror\"\n").unwrap();
        assert_eq!(n.size.bytes(SizeMeaning::Exact).unwrap(), 4096);
    }

    #[test]
    fn a_programs_values_are_written_as_a_file_spells_them() {
        let d = Doc {
            size: Size::from(34_359_738_368u64),
            layout: Layout::from(Shape::parse("2xraidz2-6").unwrap()),
        };
        assert_eq!(
            toml::to_string(&d).unwrap(),
            "size = \"34359738368\"\nlayout = \"2xraidz2-6\"\n"
        );
        let back: Doc = toml::from_str(&toml::to_string(&d).unwrap()).unwrap();
        assert_eq!(back.size.bytes(SizeMeaning::Exact).unwrap(), 34_359_738_368);
        assert_eq!(back.layout.shape().unwrap(), d.layout.shape().unwrap());
    }

    #[test]
    fn a_programs_link_is_the_link_its_name_reads_as() {
        let l = Link::parse("2x10G").unwrap().unwrap();
        assert_eq!(LinkRate::from(l).to_string(), "2x10G");
        assert_eq!(LinkRate::from("2x10G").link().unwrap(), Some(l));
        assert_eq!(LinkRate::from("none").link().unwrap(), None);
    }

    #[test]
    fn a_disk_size_in_bytes_is_not_read_as_marketed() {
        // 8TB marketed is the IDEMA count; bytes handed over stay bytes.
        let marketed = Size::from("8TB").bytes(SizeMeaning::MarketedDisk).unwrap();
        assert_ne!(marketed, 8_000_000_000_000);
        assert_eq!(
            Size::from(marketed)
                .bytes(SizeMeaning::MarketedDisk)
                .unwrap(),
            marketed
        );
    }
}
