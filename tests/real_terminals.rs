//! Pictures in real terminals, as a browser project tests in a real browser: each terminal
//! installed (xterm as a VT340, mlterm, kitty) runs frameaudit under Xvfb on a dataset whose
//! frames are solid colours; an item is opened and the cursor moved, the screen is taken as
//! a picture and checked by its pixels: the header still on the first row, each frame's
//! colour inside the box its text stand-in has (read from the same screen in tmux), nothing
//! outside, nothing left of a frame after moving on. Each absent tool skips with a note.
//! `FRAMEAUDIT_SCREENS=DIR` keeps the screens (halved) there, the review's evidence.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use image::{Rgb, RgbImage};

/// The frames' colours, by index: none is a colour the screens draw text or bars in.
const PALETTE: [[u8; 3]; 8] = [
    [255, 128, 0],
    [128, 0, 255],
    [0, 128, 255],
    [255, 0, 128],
    [128, 255, 0],
    [0, 255, 128],
    [0, 64, 160],
    [160, 0, 64],
];
const COLS: u32 = 120;
const ROWS: u32 = 40;
/// The grid after the window is made smaller.
const SMALL: (u32, u32) = (100, 36);

/// The reference screens: the first row, and the boxes after opening the item, after moving
/// one frame on, and after the window was made [`SMALL`].
struct Reference {
    first: String,
    opened: Vec<Slot>,
    moved: Vec<Slot>,
    resized: Vec<Slot>,
}

fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        common::skip_note(format_args!("{tool} is absent; skipping what needs it"));
    }
    found
}

/// One item whose 8 frames are solid colours, right at 4 frames and wrong at 8 (so it is
/// in the queue, its panel showing the 8 frames in order).
fn solid_dataset(dir: &Path) -> PathBuf {
    let ds = dir.join("solid");
    let frames = ds.join("frames/solid");
    std::fs::create_dir_all(&frames).expect("mkdir");
    for (i, c) in PALETTE.iter().enumerate() {
        RgbImage::from_pixel(160, 90, Rgb(*c))
            .save(frames.join(format!("{i:06}.png")))
            .expect("frame");
    }
    std::fs::write(
        ds.join("dataset.json"),
        r#"{"schema":"frameaudit/dataset@1","name":"solid","frames_dir":"frames","frame_name":"{index:06}.png","configs":{"4f":{"policy":"linspace"},"8f":{"policy":"linspace"}}}"#,
    )
    .expect("dataset.json");
    std::fs::write(
        ds.join("items.jsonl"),
        r#"{"benchmark":"solid-mcq","item_id":"solid-q1","question":"Which colour comes first?","options":["A. orange","B. violet"],"gold":"A","video":"solid","num_frames":8,"fps":1.0,"duration":8.0}"#,
    )
    .expect("items");
    let cell = |cfg: &str, n: u32, pred: &str| {
        format!(
            r#"{{"benchmark":"solid-mcq","config":"{cfg}","frames":{n},"gold":"A","item_id":"solid-q1","model":"m1","pred":"{pred}","task":"mcq"}}"#
        )
    };
    std::fs::write(
        ds.join("cells.jsonl"),
        format!("{}\n{}\n", cell("4f", 4, "A"), cell("8f", 8, "B")),
    )
    .expect("cells");
    ds
}

/// A box the screens keep for a frame, in cells (inclusive of its border), and the frame.
#[derive(Debug, Clone, Copy)]
struct Slot {
    x: u32,
    y: u32,
    w: u32,
    h: u32,
    frame: usize,
}

/// A tmux server of its own (`-L sock`) reading an empty configuration written in `dir`:
/// the user's tmux.conf stays out, so the pane's options are tmux's defaults.
fn private_tmux(sock: String, dir: &Path) -> impl Fn(&[&str]) -> std::process::Output {
    let conf = dir.join("tmux.conf");
    std::fs::write(&conf, "").expect("tmux.conf");
    move |args: &[&str]| {
        Command::new("tmux")
            .arg("-L")
            .arg(&sock)
            .arg("-f")
            .arg(&conf)
            .env_remove("NO_COLOR")
            .env_remove("TMUX")
            .args(args)
            .output()
            .expect("tmux")
    }
}

/// The screen's text in tmux with pictures as text stand-ins (the boxes are where pictures
/// go in every protocol).
fn reference(ds: &Path, dir: &Path) -> Option<Reference> {
    if !have("tmux") {
        return None;
    }
    let tmux = private_tmux(format!("fa-real-{}", std::process::id()), dir);
    let cmd = format!(
        "{} {} --annotator ref --audit {} --images none",
        env!("CARGO_BIN_EXE_frameaudit"),
        ds.display(),
        dir.join("ref.audit.jsonl").display()
    );
    let out = tmux(&[
        "new-session",
        "-d",
        "-s",
        "ref",
        "-x",
        &COLS.to_string(),
        "-y",
        &ROWS.to_string(),
        &cmd,
    ]);
    assert!(out.status.success(), "tmux: {out:?}");
    let capture =
        || String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", "ref"]).stdout).into_owned();
    // The screen once it shows `want` and has settled: a capture can fall between the
    // writes of one draw (the title there, the boxes below not yet), so the same screen
    // must come twice, 100 ms apart.
    let screen = |want: &str| {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let s = capture();
            if s.contains(want) {
                std::thread::sleep(Duration::from_millis(100));
                if capture() == s {
                    return s;
                }
            }
            assert!(Instant::now() < end, "waiting for {want:?}:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    screen("audit queue");
    tmux(&["send-keys", "-t", "ref", "Enter"]);
    let opened = screen("frame 0 · 00:00 · 8f 1/8");
    tmux(&["send-keys", "-t", "ref", "Right"]);
    let moved = screen("frame 1 · 00:01 · 8f 2/8");
    let (w, h) = (SMALL.0.to_string(), SMALL.1.to_string());
    tmux(&["resize-window", "-t", "ref", "-x", &w, "-y", &h]);
    let end = Instant::now() + Duration::from_secs(20);
    let resized = loop {
        let s = screen("frame 1 · 00:01");
        let b = boxes(&s);
        // Redrawn (not the old screen cut): the large box ends at the new right edge.
        if b.iter().any(|x| x.w > 30 && x.x + x.w == SMALL.0) {
            break b;
        }
        assert!(Instant::now() < end, "tmux did not resize:\n{s}");
        std::thread::sleep(Duration::from_millis(50));
    };
    tmux(&["kill-server"]);
    Some(Reference {
        first: opened.lines().next().unwrap_or("").to_string(),
        opened: boxes(&opened),
        moved: boxes(&moved),
        resized,
    })
}

/// The boxes drawn with ┌┐└┘ that hold a frame's label (`#3`, `frame 3 · …`).
fn boxes(screen: &str) -> Vec<Slot> {
    let grid: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let at = |x: usize, y: usize| grid.get(y).and_then(|r| r.get(x)).copied().unwrap_or(' ');
    let mut out = Vec::new();
    for (y, row) in grid.iter().enumerate() {
        for (x, &c) in row.iter().enumerate() {
            if c != '┌' {
                continue;
            }
            let Some(w) = (x + 1..row.len())
                .find(|&i| at(i, y) == '┐')
                .map(|i| i - x + 1)
            else {
                continue;
            };
            let Some(h) = (y + 1..grid.len())
                .find(|&j| at(x, j) == '└')
                .map(|j| j - y + 1)
            else {
                continue;
            };
            let inside: String = (y + 1..y + h - 1)
                .map(|j| (x + 1..x + w - 1).map(|i| at(i, j)).collect::<String>())
                .collect::<Vec<_>>()
                .join(" ");
            let label = inside
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .find_map(|p| match p {
                    ["frame", n] => n.parse().ok(),
                    [n, _] if n.starts_with('#') => n[1..].parse().ok(),
                    _ => None,
                })
                .or_else(|| {
                    inside
                        .split_whitespace()
                        .find_map(|t| t.strip_prefix('#').and_then(|n| n.parse().ok()))
                });
            if let Some(frame) = label {
                out.push(Slot {
                    x: x as u32,
                    y: y as u32,
                    w: w as u32,
                    h: h as u32,
                    frame,
                });
            }
        }
    }
    out
}

/// Xvfb on a display of this test's own, stopped when dropped.
struct Display {
    num: u32,
    child: Child,
}

impl Display {
    fn start() -> Option<Display> {
        if !have("Xvfb") || !have("xdotool") || !have("import") {
            return None;
        }
        let num = (200..400)
            .map(|n| n + std::process::id() % 200)
            .find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists())?;
        let child = Command::new("Xvfb")
            .args([
                &format!(":{num}"),
                "-screen",
                "0",
                "1600x1000x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let d = Display { num, child };
        let end = Instant::now() + Duration::from_secs(10);
        while !Path::new(&format!("/tmp/.X11-unix/X{num}")).exists() {
            if Instant::now() > end {
                common::skip_note(format_args!("Xvfb :{num} did not start; skipping"));
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(d)
    }

    fn name(&self) -> String {
        format!(":{}", self.num)
    }

    fn xdotool(&self, args: &[&str]) -> String {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", self.name())
            .output()
            .expect("xdotool");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A window's contents (without its border) as a picture.
    fn shot(&self, window: &str, path: &Path) -> RgbImage {
        // A window being resized can refuse a capture for a moment: a few tries.
        let mut why = String::new();
        for _ in 0..5 {
            match Command::new("import")
                .args(["-window", window])
                .arg(path)
                .env("DISPLAY", self.name())
                .output()
            {
                Ok(o) if o.status.success() => {
                    if let Ok(img) = image::open(path) {
                        return img.to_rgb8();
                    }
                    why = "unreadable screenshot".into();
                }
                Ok(o) => why = String::from_utf8_lossy(&o.stderr).into_owned(),
                Err(e) => why = e.to_string(),
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("import -window {window} failed: {why}");
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A terminal window running frameaudit, closed when dropped.
struct Window {
    child: Child,
    /// Its X window id.
    id: String,
    /// Position and size in pixels.
    rect: (u32, u32, u32, u32),
}

impl Drop for Window {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The terminals tried: name, frameaudit's extra arguments, and the terminal's command line
/// to run `cmd` (a script) titled `title` with a 120x40 grid and no padding. xterm also
/// runs with sixel asked for by name, which once drew at a guessed cell size.
fn terminals(title: &str, cmd: &str) -> Vec<(&'static str, &'static str, Vec<String>)> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let xterm = s(&[
        "xterm",
        "-ti",
        "vt340",
        "-geometry",
        "120x40+0+0",
        "-b",
        "0",
        "-fa",
        "Monospace",
        "-fs",
        "9",
        "-T",
        title,
        "-e",
        cmd,
    ]);
    vec![
        ("xterm", "", xterm.clone()),
        ("xterm-sixel", "--images sixel", xterm),
        (
            "mlterm",
            "",
            s(&[
                "mlterm",
                "-g",
                "120x40+0+0",
                "--sb=false",
                "--border=0",
                "-T",
                title,
                "-e",
                cmd,
            ]),
        ),
        (
            "kitty",
            "",
            s(&[
                "kitty",
                "--title",
                title,
                "-o",
                "initial_window_width=120c",
                "-o",
                "initial_window_height=40c",
                "-o",
                "window_padding_width=0",
                "-o",
                "remember_window_size=no",
                "-o",
                "placement_strategy=top-left",
                cmd,
            ]),
        ),
    ]
}

fn open_window(d: &Display, argv: &[String], title: &str) -> Option<Window> {
    let child = Command::new(&argv[0])
        .args(&argv[1..])
        .env("DISPLAY", d.name())
        // kitty draws with OpenGL: Mesa's software renderer under Xvfb.
        .env("LIBGL_ALWAYS_SOFTWARE", "1")
        .env_remove("TMUX")
        .env_remove("KITTY_WINDOW_ID")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut w = Window {
        child,
        id: String::new(),
        rect: (0, 0, 0, 0),
    };
    // A minute: with the other test binaries running beside it, xterm once took more than
    // 20 s to map its window, and the sixel check was skipped.
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let geo = d.xdotool(&["search", "--name", title, "getwindowgeometry"]);
        let num = |key: &str, sep: char| -> Option<(u32, u32)> {
            let rest = geo.split(key).nth(1)?.split_whitespace().next()?;
            let (a, b) = rest.split_once(sep)?;
            Some((a.parse().ok()?, b.parse().ok()?))
        };
        let id = geo
            .split("Window")
            .nth(1)
            .and_then(|r| r.split_whitespace().next());
        if let (Some(id), Some((x, y)), Some((wd, ht))) =
            (id, num("Position:", ','), num("Geometry:", 'x'))
        {
            w.id = id.to_string();
            w.rect = (x, y, wd, ht);
            return Some(w);
        }
        if Instant::now() > end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn near(p: &Rgb<u8>, c: &[u8; 3]) -> bool {
    p.0.iter().zip(c).all(|(a, b)| a.abs_diff(*b) <= 40)
}

/// A window's picture, and its cell size.
struct Screen {
    img: RgbImage,
    cw: u32,
    ch: u32,
}

impl Screen {
    /// The picture of a window of `grid` (columns, rows).
    fn new(img: RgbImage, grid: (u32, u32)) -> Screen {
        Screen {
            cw: img.width() / grid.0,
            ch: img.height() / grid.1,
            img,
        }
    }

    /// Pixels of the cell rectangle (x, y, w, h) in cells.
    fn cells(&self, x: u32, y: u32, w: u32, h: u32) -> impl Iterator<Item = (u32, u32, &Rgb<u8>)> {
        let (px, py) = (x * self.cw, y * self.ch);
        let (pw, ph) = (w * self.cw, h * self.ch);
        self.img
            .enumerate_pixels()
            .filter(move |(i, j, _)| *i >= px && *i < px + pw && *j >= py && *j < py + ph)
    }

    fn in_slot(&self, s: &Slot, i: u32, j: u32) -> bool {
        i >= s.x * self.cw
            && i < (s.x + s.w) * self.cw
            && j >= s.y * self.ch
            && j < (s.y + s.h) * self.ch
    }

    /// How many pixels of a slot are the colour of frame `f`.
    fn share(&self, s: &Slot, f: usize) -> f64 {
        let (n, all) = self
            .cells(s.x, s.y, s.w, s.h)
            .fold((0usize, 0usize), |(n, all), (_, _, p)| {
                (n + near(p, &PALETTE[f]) as usize, all + 1)
            });
        n as f64 / all.max(1) as f64
    }

    /// How many pixels of a slot are neither its frame's colour nor the background: what a
    /// `loading…` stand-in or its box left behind.
    fn leftover(&self, s: &Slot, bg: &Rgb<u8>) -> f64 {
        let (n, all) =
            self.cells(s.x, s.y, s.w, s.h)
                .fold((0usize, 0usize), |(n, all), (_, _, p)| {
                    let other = !near(p, &PALETTE[s.frame]) && !near(p, &bg.0);
                    (n + other as usize, all + 1)
                });
        n as f64 / all.max(1) as f64
    }

    /// The pixels of frame `f`'s colour outside the slots that show it: those of a 2x2
    /// block of that colour (a glyph's anti-aliased edge is never one).
    fn stray(&self, slots: &[Slot], f: usize) -> Vec<(u32, u32)> {
        let c = &PALETTE[f];
        let at = |i: u32, j: u32| {
            i < self.img.width() && j < self.img.height() && near(self.img.get_pixel(i, j), c)
        };
        self.img
            .enumerate_pixels()
            .filter(|(i, j, p)| {
                near(p, c)
                    && at(i + 1, *j)
                    && at(*i, j + 1)
                    && at(i + 1, j + 1)
                    && !slots
                        .iter()
                        .any(|s| s.frame == f && self.in_slot(s, *i, *j))
            })
            .map(|(i, j, _)| (i, j))
            .collect()
    }

    /// The background: the commonest colour.
    fn background(&self) -> Rgb<u8> {
        let mut counts = std::collections::HashMap::new();
        for p in self.img.pixels() {
            *counts.entry(p.0).or_insert(0usize) += 1;
        }
        Rgb(counts
            .into_iter()
            .max_by_key(|x| x.1)
            .map_or([0; 3], |x| x.0))
    }

    /// Whether a cell of row `y` has ink (pixels unlike the background).
    fn ink(&self, x: u32, y: u32, bg: &Rgb<u8>) -> bool {
        self.cells(x, y, 1, 1)
            .filter(|(_, _, p)| {
                p.0.iter()
                    .zip(bg.0)
                    .map(|(a, b)| a.abs_diff(b) as u32)
                    .sum::<u32>()
                    > 90
            })
            .count()
            >= 2
    }

    /// The header row's cells against the reference text's: how many of the first 80
    /// differ (a letter or digit without ink, a blank with ink; a dim `·` may be either).
    fn header_mismatches(&self, first: &str) -> usize {
        let bg = self.background();
        first
            .chars()
            .chain(std::iter::repeat(' '))
            .take(80)
            .enumerate()
            .filter(|(x, c)| {
                let ink = self.ink(*x as u32, 0, &bg);
                (c.is_alphanumeric() && !ink) || (*c == ' ' && ink)
            })
            .count()
    }
}

/// Takes screenshots until `ok` holds of the window's part, or 20 s.
fn wait_screen(
    d: &Display,
    w: &Window,
    grid: (u32, u32),
    path: &Path,
    ok: impl Fn(&Screen) -> bool,
) -> (Screen, bool) {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let s = Screen::new(d.shot(&w.id, path), grid);
        if ok(&s) {
            // Once more after the terminal settles: what stays is checked.
            std::thread::sleep(Duration::from_millis(400));
            return (Screen::new(d.shot(&w.id, path), grid), true);
        }
        if Instant::now() > end {
            return (s, false);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn keep(screen: &Screen, name: &str) {
    if let Some(dir) = std::env::var_os("FRAMEAUDIT_SCREENS") {
        let small = image::imageops::resize(
            &screen.img,
            screen.img.width() / 2,
            screen.img.height() / 2,
            image::imageops::FilterType::Triangle,
        );
        let _ = std::fs::create_dir_all(&dir);
        let _ = small.save(Path::new(&dir).join(format!("{name}.png")));
    }
}

/// Checks one screen: the header, each slot's colour, nothing of a frame outside its slots.
fn check(name: &str, s: &Screen, first: &str, slots: &[Slot]) -> Vec<String> {
    let mut problems = Vec::new();
    let m = s.header_mismatches(first);
    if m > 3 {
        problems.push(format!(
            "{name}: the header is not on the first row ({m} of 80 cells unlike {first:?})"
        ));
    }
    let bg = s.background();
    for slot in slots {
        let left = s.leftover(slot, &bg);
        if left > 0.01 {
            problems.push(format!(
                "{name}: {:.1}% of frame {}'s box {slot:?} is neither the frame nor the \
                 background (a stand-in left behind)",
                left * 100.0,
                slot.frame
            ));
        }
        let share = s.share(slot, slot.frame);
        if share < 0.15 {
            problems.push(format!(
                "{name}: frame {} covers {:.0}% of its box {slot:?}",
                slot.frame,
                share * 100.0
            ));
        }
    }
    for f in 0..PALETTE.len() {
        let stray = s.stray(slots, f);
        if !stray.is_empty() {
            problems.push(format!(
                "{name}: {} pixels of frame {f}'s colour outside its boxes, first at {:?} \
                 (cell {:?})",
                stray.len(),
                stray[0],
                (stray[0].0 / s.cw, stray[0].1 / s.ch)
            ));
        }
    }
    problems
}

#[test]
fn pictures_stay_in_their_boxes_in_real_terminals() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = solid_dataset(tmp.path());
    let Some(Reference {
        first,
        opened,
        moved,
        resized,
    }) = reference(&ds, tmp.path())
    else {
        return;
    };
    assert!(
        opened.len() >= 6 && opened.iter().any(|s| s.w > 30),
        "the reference screen has the thumbnails and the large frame: {opened:?}"
    );
    let Some(d) = Display::start() else { return };
    let mut problems = Vec::new();
    let mut tried = 0;
    for (i, (name, extra, _)) in terminals("", "").iter().enumerate() {
        let title = format!("fa-real-{name}-{}", std::process::id());
        let script = tmp.path().join(format!("run-{name}.sh"));
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nexec {} {} --annotator {name} --audit {} {extra} 2>{}\n",
                env!("CARGO_BIN_EXE_frameaudit"),
                ds.display(),
                tmp.path().join(format!("{name}.audit.jsonl")).display(),
                tmp.path().join(format!("{name}.err")).display(),
            ),
        )
        .expect("script");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        let argv = terminals(&title, &script.display().to_string())[i]
            .2
            .clone();
        if !have(&argv[0]) {
            continue;
        }
        let Some(w) = open_window(&d, &argv, &title) else {
            common::skip_note(format_args!(
                "{name} opened no window under Xvfb; skipping it"
            ));
            continue;
        };
        let shot = tmp.path().join(format!("{name}.png"));
        // The queue first (its header), then the item.
        let (queue, ok) = wait_screen(&d, &w, (COLS, ROWS), &shot, |s| {
            s.header_mismatches(&first) <= 3
        });
        keep(&queue, &format!("{name}-queue"));
        let blank = queue.img.pixels().all(|p| p == queue.img.get_pixel(0, 0));
        if !ok && blank {
            // Nothing drawn at all: the terminal does not draw here (kitty without a usable
            // OpenGL), which is not frameaudit's to judge.
            common::skip_note(format_args!("{name} drew nothing under Xvfb; skipping it"));
            continue;
        }
        assert!(
            ok,
            "{name}: the queue's header never showed on the first row ({} cells unlike {first:?})",
            queue.header_mismatches(&first)
        );
        tried += 1;
        let (cx, cy) = (w.rect.0 + w.rect.2 / 2, w.rect.1 + w.rect.3 / 2);
        d.xdotool(&["mousemove", &cx.to_string(), &cy.to_string()]);
        d.xdotool(&["key", "Return"]);
        let big = |slots: &[Slot]| *slots.iter().max_by_key(|s| s.w * s.h).expect("slots");
        let (open, ok) = wait_screen(&d, &w, (COLS, ROWS), &shot, |s| {
            s.share(&big(&opened), 0) > 0.15
        });
        if !ok {
            problems.push(format!("{name}: frame 0 never showed in the large box"));
        }
        keep(&open, &format!("{name}-opened"));
        problems.extend(check(
            &format!("{name}, item opened"),
            &open,
            &first,
            &opened,
        ));
        d.xdotool(&["key", "Right"]);
        let (next, ok) = wait_screen(&d, &w, (COLS, ROWS), &shot, |s| {
            s.share(&big(&moved), 1) > 0.15
        });
        if !ok {
            problems.push(format!("{name}: frame 1 never showed after →"));
        }
        keep(&next, &format!("{name}-moved"));
        problems.extend(check(&format!("{name}, after →"), &next, &first, &moved));
        // Smaller: every picture redrawn in the new boxes, nothing left where they were.
        let (cw, ch) = (next.cw, next.ch);
        let (pw, ph) = ((SMALL.0 * cw).to_string(), (SMALL.1 * ch).to_string());
        d.xdotool(&["windowsize", &w.id, &pw, &ph]);
        let (small, ok) = wait_screen(&d, &w, SMALL, &shot, |s| {
            s.img.width() == SMALL.0 * cw
                && s.img.height() == SMALL.1 * ch
                && s.share(&big(&resized), 1) > 0.15
        });
        if ok {
            keep(&small, &format!("{name}-resized"));
            problems.extend(check(&format!("{name}, resized"), &small, &first, &resized));
        } else {
            common::skip_note(format_args!(
                "{name} did not take the size {}x{} ({}x{} px); resize not checked",
                SMALL.0,
                SMALL.1,
                small.img.width(),
                small.img.height()
            ));
        }
        drop(w);
    }
    if tried == 0 {
        common::skip_note(format_args!(
            "no X terminal (xterm, mlterm, kitty) is installed; nothing checked"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// tmux's `allow-passthrough` of a pane is the user's: frameaudit never turns it on unless
/// `FRAMEAUDIT_TMUX_PASSTHROUGH=1` lets it, and then sets it back when it quits (a pane
/// left with passthrough lets later output escape tmux). With passthrough, the outer
/// terminal's answers never come (a detached session has none), so the query lasts its
/// whole timeout: the Enter typed meanwhile must still open the item.
#[test]
fn tmux_passthrough_is_left_alone_or_restored() {
    if !have("tmux") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = solid_dataset(tmp.path());
    let tmux = private_tmux(format!("fa-pass-{}", std::process::id()), tmp.path());
    let text = |args: &[&str]| {
        String::from_utf8_lossy(&tmux(args).stdout)
            .trim()
            .to_string()
    };
    // Each run has a session of its own, left until the server is killed: killing the
    // server's only session makes it exit, and a session started at that moment meets a
    // dying server ("server exited unexpectedly").
    for allow in [false, true] {
        let session = format!("p{allow}");
        let session = session.as_str();
        let after = tmp.path().join(format!("after-{allow}.txt"));
        let cmd = format!(
            "{}{} {} --annotator p{allow} --audit {}; tmux show -pv allow-passthrough > {}; sleep 30",
            if allow {
                "FRAMEAUDIT_TMUX_PASSTHROUGH=1 "
            } else {
                ""
            },
            env!("CARGO_BIN_EXE_frameaudit"),
            ds.display(),
            tmp.path().join(format!("p{allow}.audit.jsonl")).display(),
            after.display()
        );
        let out = tmux(&[
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "120",
            "-y",
            "40",
            &cmd,
        ]);
        assert!(out.status.success(), "tmux: {out:?}");
        let wait = |want: &dyn Fn(&str) -> bool, what: &str| {
            let end = Instant::now() + Duration::from_secs(20);
            loop {
                let s = text(&["capture-pane", "-p", "-t", session]);
                if want(&s) {
                    return;
                }
                assert!(Instant::now() < end, "waiting for {what}:\n{s}");
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        wait(&|s| s.contains("audit queue"), "the queue");
        tmux(&["send-keys", "-t", session, "Enter"]);
        wait(&|s| s.contains("frame 0 · 00:00"), "the item");
        let during = text(&["show", "-pv", "-t", session, "allow-passthrough"]);
        if allow {
            assert_eq!(during, "on", "allowed, frameaudit turns passthrough on");
        } else {
            assert_eq!(during, "", "frameaudit set the pane's allow-passthrough");
        }
        // One key at a time, each seen to act: back to the queue, then quit.
        tmux(&["send-keys", "-t", session, "q"]);
        wait(&|s| s.contains("audit queue"), "the queue again after q");
        tmux(&["send-keys", "-t", session, "q"]);
        let end = Instant::now() + Duration::from_secs(20);
        while !after.exists() {
            assert!(Instant::now() < end, "frameaudit did not quit");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(100));
        let left = std::fs::read_to_string(&after).expect("after");
        assert_eq!(
            left.trim(),
            "",
            "the pane's allow-passthrough after quitting"
        );
    }
    tmux(&["kill-server"]);
}

/// `frameaudit doctor terminal` in a tmux pane: it asks the terminal (tmux answers), names
/// tmux's version and passthrough, the protocol and why, even with its output in a file.
#[test]
fn doctor_terminal_in_tmux_says_what_it_found() {
    if !have("tmux") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("doctor.txt");
    let sock = format!("fa-doc-{}", std::process::id());
    let cmd = format!(
        "{} doctor terminal > {} 2>&1; sleep 30",
        env!("CARGO_BIN_EXE_frameaudit"),
        out.display()
    );
    let tmux = private_tmux(sock, tmp.path());
    let started = tmux(&[
        "new-session",
        "-d",
        "-s",
        "d",
        "-x",
        "100",
        "-y",
        "30",
        &cmd,
    ]);
    assert!(started.status.success(), "tmux: {started:?}");
    let end = Instant::now() + Duration::from_secs(20);
    let text = loop {
        let t = std::fs::read_to_string(&out).unwrap_or_default();
        if t.contains("why") {
            break t;
        }
        assert!(Instant::now() < end, "no report:\n{t}");
        std::thread::sleep(Duration::from_millis(50));
    };
    tmux(&["kill-server"]);
    let version = String::from_utf8_lossy(
        &Command::new("tmux")
            .args(["-V"])
            .output()
            .expect("tmux -V")
            .stdout,
    )
    .trim()
    .trim_start_matches("tmux ")
    .to_string();
    assert!(
        text.contains(&format!("tmux            {version}, allow-passthrough off")),
        "{text}"
    );
    assert!(
        text.contains("answered in"),
        "tmux answers the query:\n{text}"
    );
    assert!(
        text.contains(&format!("version         tmux {version}")),
        "{text}"
    );
    assert!(text.contains("protocol        "), "{text}");
}
