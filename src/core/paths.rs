//! File names from data: the `frame_name` template of `dataset.json`, the `frame_files`
//! template of a run, the check that a name from a data file stays inside the directory
//! it is joined to, and names made unique among the files one command writes. Pure string
//! work, imported by both `dataset` and `frames`.

use std::path::{Component, Path};

/// The widest zero padding a template may ask for: a bound so that `{index:0999999999}`
/// cannot make frameaudit allocate gigabytes.
const MAX_PAD: usize = 32;

/// Checks that `name` (a video name, a directory or a file name from a data file) is a
/// relative path that stays below the directory it is joined to. The error completes a
/// sentence: "the video name "x" <why>".
pub(crate) fn check_relative(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("is empty".into());
    }
    if name.contains('\0') {
        return Err("contains a NUL byte".into());
    }
    // Both separators count, so a name meant for Windows cannot climb out on either system.
    if name.starts_with('/') || name.starts_with('\\') || Path::new(name).is_absolute() {
        return Err(
            "is an absolute path; frameaudit only reads inside the dataset directory".into(),
        );
    }
    if name.split(['/', '\\']).any(|part| part == "..") {
        return Err("contains \"..\"; frameaudit only reads inside the dataset directory".into());
    }
    // Drive prefixes (`C:x`) and anything else that is not a plain name.
    let plain = Path::new(name)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain {
        return Err(
            "is not a plain relative path; frameaudit only reads inside the dataset directory"
                .into(),
        );
    }
    Ok(())
}

/// Checks a `frame_name` template the way [`check_relative`] checks a name: the file name
/// it gives (for frame 0, the first of one) stays below the video's frame folder. A
/// template that cannot be rendered says why.
pub(crate) fn check_frame_name(template: &str) -> Result<(), String> {
    let name = render_name(template, 0, Some((0, 1)))?;
    check_relative(&name).map_err(|why| {
        if name == template {
            why
        } else {
            format!("gives the file name {name:?}, which {why}")
        }
    })
}

/// Renders a `frame_name` template for frame `index`, the `i`-th of `n` sampled when
/// `position` is `Some((i, n))` (0-based `i`). Placeholders: `{index}`, `{i}` (1-based
/// position), `{n}`, each with an optional zero padding `:0W` (`{index:06}`); `{{` and
/// `}}` are literal braces.
pub(crate) fn render_name(
    template: &str,
    index: u64,
    position: Option<(usize, usize)>,
) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 8);
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '}' => return Err("a \"}\" without \"{\" (write \"}}\" for a literal brace)".into()),
            '{' => {
                let mut field = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(ch) => field.push(ch),
                        None => return Err(format!("the placeholder {{{field} is not closed")),
                    }
                }
                let (name, spec) = field.split_once(':').unwrap_or((&field, ""));
                let value: u64 = match (name, position) {
                    ("index", _) => index,
                    ("i", Some((i, _))) => i as u64 + 1,
                    ("n", Some((_, n))) => n as u64,
                    ("i" | "n", None) => {
                        return Err(format!(
                            "{{{name}}} needs the frame's position among the sampled frames, which this frame has not"
                        ));
                    }
                    _ => {
                        return Err(format!(
                            "unknown placeholder {{{field}}}; known: {{index}}, {{index:06}}, {{i}}, {{n}}"
                        ));
                    }
                };
                let width = parse_pad(spec).ok_or_else(|| {
                    format!(
                        "unsupported format {{{field}}}; only zero padding such as {{{name}:06}} is"
                    )
                })?;
                out.push_str(&format!("{value:0width$}"));
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// The width of a zero-padding spec: `""` → 0, `"06"` → 6; `None` for anything else.
fn parse_pad(spec: &str) -> Option<usize> {
    if spec.is_empty() {
        return Some(0);
    }
    let digits = spec.strip_prefix('0')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok().filter(|&w| w <= MAX_PAD)
}

/// Renders a run's `frame_files` template (`images/Video-MME/{video}/frame-{i}-of-{n}.jpg`)
/// for the `i`-th (0-based) of `n` frames of `video`. `{video_stem}` is the video's name
/// as VLMEvalKit's MLVU names its frame folder: without `.{suffix}` wherever it occurs,
/// the suffix being what follows the last dot (docs/frame-rules.md).
pub fn saved_frame_path(template: &str, video: &str, i: usize, n: usize) -> String {
    let stem = |video: &str| match video.rsplit_once('.') {
        Some((_, suffix)) => video.replace(&format!(".{suffix}"), ""),
        None => video.to_string(),
    };
    let mut path = template.to_string();
    if path.contains("{video_stem}") {
        path = path.replace("{video_stem}", &stem(video));
    }
    path.replace("{video}", video)
        .replace("{i}", &(i + 1).to_string())
        .replace("{n}", &n.to_string())
}

/// File names made of names from data, each given out once: names made safe for a file
/// name can meet (`a/b` and `a b` both `a_b`), so a name already given comes back as
/// `NAME-2`, `NAME-3`... Compared without case, as the usual macOS and Windows file systems
/// compare them. Asked in a fixed order, the same names get the same files every time.
#[derive(Debug, Default)]
pub struct UniqueNames {
    given: std::collections::HashSet<String>,
}

impl UniqueNames {
    /// No name given yet.
    pub fn new() -> UniqueNames {
        UniqueNames::default()
    }

    /// `base`, or `base-N` with the smallest N from 2 that no name given yet has.
    pub fn give(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 1;
        while !self.given.insert(name.to_lowercase()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_number_the_names_already_given() {
        let mut u = UniqueNames::new();
        let got: Vec<String> = ["a_b", "a_b", "A_B", "a_b-2", "c", "a_b"]
            .iter()
            .map(|b| u.give(b))
            .collect();
        assert_eq!(got, ["a_b", "a_b-2", "A_B-3", "a_b-2-2", "c", "a_b-4"]);
    }

    #[test]
    fn placeholders_render() {
        assert_eq!(
            render_name("{index:06}.jpg", 21, None).as_deref(),
            Ok("000021.jpg")
        );
        assert_eq!(
            render_name("{index}.png", 21, None).as_deref(),
            Ok("21.png")
        );
        assert_eq!(
            render_name("img_{index:04}.jpg", 7, None).as_deref(),
            Ok("img_0007.jpg")
        );
        assert_eq!(
            render_name("f{i:03}-of-{n}.jpg", 99, Some((0, 8))).as_deref(),
            Ok("f001-of-8.jpg")
        );
        assert_eq!(render_name("{{x}}{index}", 3, None).as_deref(), Ok("{x}3"));
    }

    #[test]
    fn bad_templates_are_explained() {
        assert!(
            render_name("{frame}.jpg", 1, None)
                .unwrap_err()
                .contains("unknown")
        );
        assert!(
            render_name("{index:6}.jpg", 1, None)
                .unwrap_err()
                .contains("zero padding")
        );
        assert!(render_name("{index:0999999999}", 1, None).is_err());
        assert!(
            render_name("{index", 1, None)
                .unwrap_err()
                .contains("not closed")
        );
        assert!(
            render_name("{i}.jpg", 1, None)
                .unwrap_err()
                .contains("position")
        );
        assert!(render_name("a}b", 1, None).is_err());
    }

    #[test]
    fn names_stay_inside() {
        for ok in ["clip01", "sub/clip01", "./clip", "a..b", "clip.v2"] {
            assert!(check_relative(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "\\windows",
            "..",
            "../x",
            "a/../../b",
            "a\\..\\b",
            "a\0b",
        ] {
            assert!(check_relative(bad).is_err(), "{bad:?}");
        }
    }
}
