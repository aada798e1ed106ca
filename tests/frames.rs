//! Frames: the layouts frameaudit finds them in (docs/formats.md §1 and §3.3), refusal of bad and
//! hostile files, decoding raw videos through ffmpeg into the cache, and the background
//! loader.

mod common;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use frameaudit::core::dataset::{DatasetMeta, ItemMeta};
use frameaudit::core::frames::{
    FFMPEG_HINT, FrameKey, FrameLoader, FrameStore, Located, Trimmed, ffmpeg_on_path, load_image,
    trim_frame_cache,
};
use image::{Rgb, RgbImage};

/// A store over `root` whose items give `video` at `fps`.
fn store(root: &Path, meta: DatasetMeta, video_fps: &[(&str, f64)]) -> FrameStore {
    let items: Vec<Option<ItemMeta>> = video_fps
        .iter()
        .map(|&(v, fps)| {
            Some(ItemMeta {
                video: Some(v.into()),
                fps: Some(fps),
                ..ItemMeta::default()
            })
        })
        .collect();
    FrameStore::from_parts(Some(root.to_path_buf()), &meta, &items)
}

/// Writes a `w`x`h` image of one colour (JPEG or PNG by extension), creating directories.
fn write_image(path: &Path, w: u32, h: u32, colour: [u8; 3]) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    RgbImage::from_pixel(w, h, Rgb(colour))
        .save(path)
        .expect("save image");
}

fn missing(located: Located) -> String {
    match located {
        Located::Missing(why) => why,
        other => panic!("expected Missing, got {other:?}"),
    }
}

#[test]
fn extracted_frames_with_a_custom_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let path = root.join("stills/clip01/img_0021.png");
    write_image(&path, 320, 180, [200, 10, 10]);
    let meta = DatasetMeta {
        frames_dir: Some("stills".into()),
        frame_name: Some("img_{index:04}.png".into()),
        ..DatasetMeta::default()
    };
    let store = store(root, meta, &[]);
    let located = store.locate("clip01", 21, Some((3, 8)));
    assert_eq!(located, Located::Image(path));
    let img = load_image(&located, 64, false).expect("decodes");
    assert_eq!(img.dimensions(), (64, 36));
    assert_eq!(img.get_pixel(30, 18)[1], 10);
    // Full size when it already fits.
    let img = load_image(&located, 1000, false).expect("decodes");
    assert_eq!(img.dimensions(), (320, 180));
}

#[test]
fn extracted_frames_with_the_default_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write_image(&root.join("frames/clip01/000021.jpg"), 16, 16, [0, 0, 0]);
    write_image(&root.join("frames/clip01/7.png"), 16, 16, [0, 0, 0]);
    let store = store(root, DatasetMeta::default(), &[]);
    assert_eq!(
        store.locate("clip01", 21, None),
        Located::Image(root.join("frames/clip01/000021.jpg"))
    );
    assert_eq!(
        store.locate("clip01", 7, None),
        Located::Image(root.join("frames/clip01/7.png"))
    );
}

#[test]
fn vlmevalkit_frames_are_named_by_position() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let path = root.join("images/Video-MME_8frame/clip01/frame-3-of-8.jpg");
    write_image(&path, 40, 30, [0, 120, 0]);
    let store = store(root, DatasetMeta::default(), &[]);
    // The 3rd (position 2) of 8 frames, whatever its index.
    let located = store.locate("clip01", 1234, Some((2, 8)));
    assert_eq!(located, Located::Image(path));
    assert!(load_image(&located, 100, false).is_ok());
    // Without a position the file cannot be named.
    let why = missing(store.locate("clip01", 1234, None));
    assert!(why.contains("frames/clip01/001234.jpg"), "{why}");
    // Also directly under the frames directory.
    let path = root.join("frames/clip02/frame-1-of-4.jpg");
    write_image(&path, 40, 30, [0, 120, 0]);
    assert_eq!(
        store.locate("clip02", 0, Some((0, 4))),
        Located::Image(path)
    );
}

#[test]
fn a_missing_frame_names_what_was_tried() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(dir.path(), DatasetMeta::default(), &[]);
    let why = missing(store.locate("clip01", 21, Some((0, 8))));
    assert!(
        why.starts_with("no frame file frames/clip01/000021.jpg (nor 21.jpg, 000021.png, 21.png"),
        "{why}"
    );
    assert!(why.contains("frame-1-of-8.jpg"), "{why}");
    assert!(why.contains("videos/clip01.mp4"), "{why}");
    // Relative to the dataset, not the absolute temporary directory.
    assert!(!why.contains(&*dir.path().to_string_lossy()), "{why}");
    assert!(load_image(&Located::Missing(why.clone()), 10, true).unwrap_err() == why);
}

#[test]
fn corrupt_and_empty_files_are_refused_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let frames = root.join("frames/clip");
    std::fs::create_dir_all(&frames).expect("mkdir");
    // A JPEG signature followed by garbage, and a valid JPEG cut in half.
    std::fs::write(
        frames.join("000001.jpg"),
        b"\xFF\xD8\xFF\xE0garbage, not a JPEG",
    )
    .expect("write");
    write_image(&frames.join("000002.jpg"), 64, 64, [9, 9, 9]);
    let whole = std::fs::read(frames.join("000002.jpg")).expect("read");
    std::fs::write(frames.join("000002.jpg"), &whole[..whole.len() / 3]).expect("write");
    std::fs::write(frames.join("000003.jpg"), b"").expect("write");
    std::fs::write(frames.join("000004.jpg"), b"plain text, no image at all").expect("write");
    let store = store(root, DatasetMeta::default(), &[]);

    for index in [1, 2] {
        let err = load_image(&store.locate("clip", index, None), 100, false).unwrap_err();
        assert!(err.contains(&format!("00000{index}.jpg")), "{err}");
        assert!(err.starts_with("cannot decode"), "{err}");
    }
    let err = load_image(&store.locate("clip", 3, None), 100, false).unwrap_err();
    assert!(
        err.contains("000003.jpg") && err.contains("empty (0 bytes)"),
        "{err}"
    );
    let err = load_image(&store.locate("clip", 4, None), 100, false).unwrap_err();
    assert!(err.contains("not a JPEG or PNG"), "{err}");
}

/// A PNG with a valid header claiming `w`x`h` pixels and no pixel data.
fn png_header(w: u32, h: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= b as u32;
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB, no interlace
    chunk(&mut out, b"IHDR", &ihdr);
    // The start of a zlib stream: the pixels a real bomb would inflate to.
    chunk(
        &mut out,
        b"IDAT",
        &[0x78, 0x9c, 0xed, 0xc1, 0x01, 0x0d, 0x00, 0x00],
    );
    chunk(&mut out, b"IEND", &[]);
    out
}

#[test]
fn oversized_images_are_refused_before_decoding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bomb.png");
    std::fs::write(&path, png_header(20_000, 20_000)).expect("write");
    let err = load_image(&Located::Image(path), 100, false).unwrap_err();
    // Refused from the header, by its size: the file holds eight bytes of pixel data, so a
    // decode would have failed on those, with another message, not filled 1.2 GB.
    assert!(
        err.contains("20000x20000") && err.contains("10000x10000"),
        "{err}"
    );
    // A plausible header with no data is an error too, not a panic.
    let path = dir.path().join("short.png");
    std::fs::write(&path, png_header(64, 64)).expect("write");
    assert!(load_image(&Located::Image(path), 100, false).is_err());
}

#[test]
fn names_from_data_files_cannot_leave_the_dataset() {
    let outer = tempfile::tempdir().expect("tempdir");
    let root = outer.path().join("dataset");
    // A file outside the dataset that a traversal would reach.
    write_image(&outer.path().join("secret/000001.jpg"), 8, 8, [1, 2, 3]);
    write_image(&root.join("frames/ok/000001.jpg"), 8, 8, [1, 2, 3]);
    let store = store(&root, DatasetMeta::default(), &[("../../secret", 30.0)]);
    let secret = outer.path().join("secret");
    for video in [
        "../secret",
        "../../secret",
        "ok/../../../secret",
        "ok\\..\\..\\..\\secret",
        secret.to_str().expect("utf-8"),
        "/etc",
        "ok\0",
        "",
    ] {
        let why = missing(store.locate(video, 1, Some((0, 1))));
        assert!(why.starts_with("the video name"), "{video:?}: {why}");
    }
    for frame_name in [
        "../../secret/{index:06}.jpg",
        "/tmp/{index}.jpg",
        "a/../../{index}.jpg",
    ] {
        let meta = DatasetMeta {
            frame_name: Some(frame_name.into()),
            ..DatasetMeta::default()
        };
        let s = FrameStore::from_parts(Some(root.clone()), &meta, &[]);
        let why = missing(s.locate("ok", 1, None));
        assert!(why.contains("frame_name"), "{frame_name}: {why}");
    }
    for videos_dir in ["..", "/", "../dataset/../.."] {
        let meta = DatasetMeta {
            videos_dir: Some(videos_dir.into()),
            ..DatasetMeta::default()
        };
        let s = FrameStore::from_parts(Some(root.clone()), &meta, &[]);
        let why = missing(s.locate("secret", 1, None));
        assert!(why.contains("videos_dir"), "{videos_dir}: {why}");
    }
    // A bad template is explained, not a panic.
    let meta = DatasetMeta {
        frame_name: Some("{frame}.jpg".into()),
        ..DatasetMeta::default()
    };
    let s = FrameStore::from_parts(Some(root.clone()), &meta, &[]);
    assert!(missing(s.locate("ok", 1, None)).contains("unknown placeholder"));
    // A name inside the dataset still works.
    assert!(matches!(store.locate("ok", 1, None), Located::Image(_)));
}

/// Symbolic links are held to the rule of `..`: a link inside the dataset that leads out of
/// it is refused, except the dataset's own folder links (`frames`, `videos`, `images`, as
/// `import --videos` and `--frames-root` make them), beyond which the user's folder is read
/// as it is (a Hugging Face cache of links to blobs included).
#[cfg(unix)]
#[test]
fn symbolic_links_out_of_the_dataset_are_refused_but_its_folder_links_work() {
    use std::os::unix::fs::symlink;
    let outer = tempfile::tempdir().expect("tempdir");
    let root = outer.path().join("dataset");
    let secret = outer.path().join("secret.jpg");
    write_image(&secret, 8, 8, [9, 9, 9]);

    // A frame file that is a link out of the dataset.
    std::fs::create_dir_all(root.join("frames/clip01")).expect("mkdir");
    symlink(&secret, root.join("frames/clip01/000001.jpg")).expect("link");
    // A video folder inside the frames tree that links out.
    symlink(outer.path(), root.join("frames/clip02")).expect("link");
    std::fs::copy(&secret, outer.path().join("000003.jpg")).expect("copy");
    // A link that stays inside the dataset is fine.
    write_image(&root.join("stills/000002.jpg"), 8, 8, [0, 0, 0]);
    symlink(root.join("stills"), root.join("frames/clip03")).expect("link");
    // A relative link that climbs out.
    std::fs::create_dir_all(root.join("images/Video-MME/clip04")).expect("mkdir");
    symlink(
        "../../../../secret.jpg",
        root.join("images/Video-MME/clip04/frame-1-of-2.jpg"),
    )
    .expect("link");
    let s = store(&root, DatasetMeta::default(), &[]);
    let why = missing(s.locate("clip01", 1, None));
    assert!(
        why.contains("frames/clip01/000001.jpg is a symbolic link that leads outside the dataset")
            && why.contains("secret.jpg"),
        "{why}"
    );
    let why = missing(s.locate("clip02", 3, None));
    assert!(why.starts_with("frames/clip02 is a symbolic link"), "{why}");
    assert_eq!(
        s.locate("clip03", 2, None),
        Located::Image(root.join("frames/clip03/000002.jpg"))
    );
    let why = missing(s.locate("clip04", 7, Some((0, 2))));
    assert!(
        why.contains("images/Video-MME/clip04/frame-1-of-2.jpg is a symbolic link"),
        "{why}"
    );
    match s.locate_saved("images/Video-MME/clip04/frame-1-of-2.jpg") {
        Some(Located::Missing(why)) => assert!(why.contains("symbolic link"), "{why}"),
        other => panic!("{other:?}"),
    }
    // A raw video that links out, and a frame cache that does.
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    std::fs::write(outer.path().join("clip05.mp4"), b"x").expect("write");
    symlink(
        outer.path().join("clip05.mp4"),
        root.join("videos/clip05.mp4"),
    )
    .expect("link");
    let s = s.with_ffmpeg(Some("/bin/sh".into()));
    let why = missing(s.locate("clip05", 0, None));
    assert!(
        why.starts_with("videos/clip05.mp4 is a symbolic link"),
        "{why}"
    );
    std::fs::remove_file(root.join("videos/clip05.mp4")).expect("rm");
    std::fs::write(root.join("videos/clip05.mp4"), b"x").expect("write");
    symlink(outer.path(), root.join(".frameaudit-cache")).expect("link");
    let why = missing(s.locate("clip05", 0, None));
    assert!(
        why.starts_with(".frameaudit-cache is a symbolic link"),
        "{why}"
    );

    // The dataset's own folders may link anywhere, as the importer links them; below them
    // the user's folder is followed as it is, links to blobs of a cache included.
    let user = outer.path().join("user");
    write_image(&user.join("blobs/abc.jpg"), 8, 8, [5, 5, 5]);
    std::fs::rename(user.join("blobs/abc.jpg"), user.join("blobs/abc")).expect("rename");
    std::fs::create_dir_all(user.join("snapshot/clip06")).expect("mkdir");
    symlink("../../blobs/abc", user.join("snapshot/clip06/000001.jpg")).expect("link");
    std::fs::create_dir_all(user.join("saved/Video-MME/clip07")).expect("mkdir");
    std::fs::copy(
        &secret,
        user.join("saved/Video-MME/clip07/frame-1-of-1.jpg"),
    )
    .expect("copy");
    std::fs::write(user.join("snapshot/clip08.mp4"), b"x").expect("write");
    let linked = outer.path().join("linked");
    std::fs::create_dir_all(&linked).expect("mkdir");
    symlink(user.join("snapshot"), linked.join("frames")).expect("link");
    symlink(user.join("saved"), linked.join("images")).expect("link");
    symlink(user.join("snapshot"), linked.join("clips")).expect("link");
    let meta = DatasetMeta {
        videos_dir: Some("clips".into()),
        ..DatasetMeta::default()
    };
    let s = store(&linked, meta, &[]).with_ffmpeg(Some("/bin/sh".into()));
    assert_eq!(
        s.locate("clip06", 1, None),
        Located::Image(linked.join("frames/clip06/000001.jpg"))
    );
    assert_eq!(
        s.locate("clip07", 1, Some((0, 1))),
        Located::Image(linked.join("images/Video-MME/clip07/frame-1-of-1.jpg"))
    );
    assert_eq!(
        s.locate_saved("images/Video-MME/clip07/frame-1-of-1.jpg"),
        Some(Located::Image(
            linked.join("images/Video-MME/clip07/frame-1-of-1.jpg")
        ))
    );
    if s.ffmpeg() {
        assert!(
            matches!(s.locate("clip08", 0, None), Located::Video { .. }),
            "{:?}",
            s.locate("clip08", 0, None)
        );
    }
}

#[test]
fn without_ffmpeg_a_raw_video_gives_the_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    std::fs::write(root.join("videos/clip.mp4"), b"not decoded").expect("write");
    let s = store(root, DatasetMeta::default(), &[("clip", 10.0)])
        .with_ffmpeg(Some(root.join("no/such/ffmpeg")));
    assert!(!s.ffmpeg());
    let why = missing(s.locate("clip", 12, None));
    assert_eq!(why, FFMPEG_HINT);
    assert!(!why.contains('\n'));
    // No fps is needed: the video's frame index says which frame index 12 is.
    let s = store(root, DatasetMeta::default(), &[]).with_ffmpeg(Some("/bin/sh".into()));
    if s.ffmpeg() {
        assert!(matches!(
            s.locate("clip", 12, None),
            Located::Video { index: 12, .. }
        ));
    }
}

/// The path of ffmpeg, or `None` with a note when it is not installed.
fn ffmpeg_or_note(test: &str) -> Option<PathBuf> {
    let found = ffmpeg_on_path();
    if found.is_none() {
        common::skip_note(format_args!("{test} skipped: ffmpeg is not on PATH"));
    }
    found
}

/// A 3-second 10 fps test video whose frames show a counter, at `<root>/videos/clip.mp4`.
fn make_video(ffmpeg: &Path, root: &Path) {
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    let status = std::process::Command::new(ffmpeg)
        .args(["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc=size=160x90:rate=10")
        .args(["-t", "3", "-pix_fmt", "yuv420p"])
        .arg(root.join("videos/clip.mp4"))
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
}

#[test]
fn raw_video_frames_are_decoded_once_into_the_cache() {
    let Some(ffmpeg) = ffmpeg_or_note("raw_video_frames_are_decoded_once_into_the_cache") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    make_video(&ffmpeg, root);
    let s = store(root, DatasetMeta::default(), &[("clip", 10.0)]);
    assert!(s.ffmpeg());
    let cached = root.join(".frameaudit-cache/frames/clip/12.jpg");
    let located = s.locate("clip", 12, Some((3, 8)));
    match &located {
        Located::Video {
            video, cached: c, ..
        } => {
            assert_eq!(video, &root.join("videos/clip.mp4"));
            assert_eq!(c, &cached);
        }
        other => panic!("expected a video frame, got {other:?}"),
    }
    assert!(!cached.exists());
    let first = load_image(&located, 1000, true).expect("decodes");
    assert_eq!(first.dimensions(), (160, 90));
    assert!(cached.is_file());
    let mtime = std::fs::metadata(&cached)
        .and_then(|m| m.modified())
        .expect("mtime");
    // No temporary file is left beside it.
    let leftovers: Vec<_> = std::fs::read_dir(cached.parent().expect("dir"))
        .expect("read dir")
        .flatten()
        .filter(|e| e.file_name() != "12.jpg")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // The second load reads the cache: it works without ffmpeg and rewrites nothing.
    std::thread::sleep(Duration::from_millis(20));
    let no_ffmpeg = s.clone().with_ffmpeg(None);
    let again = no_ffmpeg.locate("clip", 12, None);
    let second = load_image(&again, 1000, false).expect("from the cache");
    assert_eq!(second, first);
    let second = load_image(&s.locate("clip", 12, None), 1000, true).expect("from the cache");
    assert_eq!(second, first);
    let mtime2 = std::fs::metadata(&cached)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert_eq!(mtime, mtime2);

    // Different frames give different pixels (testsrc draws a frame counter).
    let f0 = load_image(&s.locate("clip", 0, None), 1000, true).expect("frame 0");
    let f25 = load_image(&s.locate("clip", 25, None), 1000, true).expect("frame 25");
    assert_ne!(f0, f25);
    // Downscaled on the way out.
    let small = load_image(&s.locate("clip", 25, None), 40, true).expect("frame 25");
    assert_eq!(small.dimensions(), (40, 23));
    // Past the end of the video: an error, and nothing is cached.
    let err = load_image(&s.locate("clip", 500, None), 100, true).unwrap_err();
    assert!(err.contains("past the end"), "{err}");
    assert!(!root.join(".frameaudit-cache/frames/clip/500.jpg").exists());
}

/// The decoded frame is the requested one: the same pixels as ffmpeg's exact (slow) frame
/// selection gives, for frames on and between keyframes.
#[test]
fn raw_video_decoding_picks_the_exact_frame() {
    let Some(ffmpeg) = ffmpeg_or_note("raw_video_decoding_picks_the_exact_frame") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    make_video(&ffmpeg, root);
    let s = store(root, DatasetMeta::default(), &[("clip", 10.0)]);
    for index in [1u64, 12, 29] {
        let ours = load_image(&s.locate("clip", index, None), 1000, true).expect("decodes");
        let exact = root.join(format!("exact-{index}.jpg"));
        let status = std::process::Command::new(&ffmpeg)
            .args(["-nostdin", "-loglevel", "error", "-y", "-i"])
            .arg(root.join("videos/clip.mp4"))
            .arg("-vf")
            .arg(format!("select=eq(n\\,{index})"))
            .args(["-frames:v", "1", "-q:v", "3"])
            .arg(&exact)
            .status()
            .expect("run ffmpeg");
        assert!(status.success());
        let exact = load_image(&Located::Image(exact), 1000, false).expect("decodes");
        assert_eq!(ours, exact, "frame {index}");
    }
}

/// A wrapper around ffmpeg that counts its runs: the seam to check the cache is used.
#[cfg(unix)]
#[test]
fn ffmpeg_runs_once_per_frame() {
    use std::os::unix::fs::PermissionsExt;
    let Some(ffmpeg) = ffmpeg_or_note("ffmpeg_runs_once_per_frame") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    make_video(&ffmpeg, root);
    let count = root.join("runs");
    let wrapper = root.join("counting-ffmpeg");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho run >> '{}'\nexec '{}' \"$@\"\n",
            count.display(),
            ffmpeg.display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let s = store(root, DatasetMeta::default(), &[("clip", 10.0)]).with_ffmpeg(Some(wrapper));
    let runs = || std::fs::read_to_string(&count).map_or(0, |t| t.lines().count());
    for _ in 0..3 {
        load_image(&s.locate("clip", 7, None), 100, true).expect("decodes");
        load_image(&s.locate("clip", 7, None), 50, true).expect("decodes");
    }
    assert_eq!(runs(), 1);
    load_image(&s.locate("clip", 8, None), 100, true).expect("decodes");
    assert_eq!(runs(), 2);
}

#[test]
fn the_loader_delivers_in_the_background_and_caches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for i in 0..6u64 {
        write_image(
            &root.join(format!("frames/clip/{i:06}.jpg")),
            200,
            100,
            [i as u8 * 40, 0, 0],
        );
    }
    let s = store(root, DatasetMeta::default(), &[]).with_ffmpeg(None);
    let (tx, rx) = mpsc::channel();
    let loader = FrameLoader::new(s, 16, move || {
        let _ = tx.send(());
    });
    let key = |index: u64, max_side: u32| FrameKey {
        video: "clip".into(),
        index,
        position: Some((index as usize, 6)),
        max_side,
        fit: None,
        saved: None,
    };
    loader.request(key(1, 50));
    loader.request(key(1, 50)); // a duplicate: one result
    rx.recv_timeout(Duration::from_secs(10)).expect("notified");
    let got = loader.get(&key(1, 50)).expect("landed");
    let img = got.as_ref().as_ref().expect("decoded");
    assert_eq!(img.dimensions(), (50, 25));
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "one load only"
    );

    // A cached key: nothing to do, answered at once (nothing pending), no new
    // notification.
    loader.request(key(1, 50));
    assert!(!loader.is_pending(&key(1, 50)));
    assert!(loader.get(&key(1, 50)).is_some());
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());

    // Another size is another image.
    assert!(loader.get(&key(1, 20)).is_none());

    // A slot to fill: the loader fits the frame to its pixels (aspect kept), so the screen
    // draws it as it comes.
    let slot = FrameKey {
        fit: Some((120, 30)),
        ..key(1, 50)
    };
    loader.request(slot.clone());
    rx.recv_timeout(Duration::from_secs(10)).expect("notified");
    let fitted = loader.get(&slot).expect("landed");
    assert_eq!(
        fitted.as_ref().as_ref().expect("decoded").dimensions(),
        (60, 30)
    );
    // A frame first asked for in a slot keeps its decoded size too: a prefetch of it (no
    // slot) or another slot needs no second decode.
    let small = FrameKey {
        fit: Some((10, 10)),
        ..key(4, 50)
    };
    loader.request(small.clone());
    rx.recv_timeout(Duration::from_secs(10)).expect("notified");
    let got = loader.get(&small).expect("landed");
    assert_eq!(
        got.as_ref().as_ref().expect("decoded").dimensions(),
        (10, 5)
    );
    let base = loader.get(&key(4, 50)).expect("the decoded size is kept");
    assert_eq!(
        base.as_ref().as_ref().expect("decoded").dimensions(),
        (50, 25)
    );

    // Prefetches land too, and failures are results.
    loader.prefetch(vec![key(2, 50), key(3, 50), key(99, 50)]);
    for _ in 0..3 {
        rx.recv_timeout(Duration::from_secs(10)).expect("notified");
    }
    assert!(loader.get(&key(2, 50)).is_some_and(|r| r.is_ok()));
    assert!(loader.get(&key(3, 50)).is_some_and(|r| r.is_ok()));
    let why = loader.get(&key(99, 50)).expect("landed");
    assert!(
        why.as_ref()
            .as_ref()
            .is_err_and(|w| w.contains("000099.jpg"))
    );
}

/// A slow decode does not block the caller. Each decode run starts with ffprobe, here a
/// fake that waits at a gate the test opens only after its own calls have returned, once
/// per run: a call that waited for the decode would hold the gate shut until the fake
/// gives up (30 s) and leaves its mark.
#[cfg(unix)]
#[test]
fn the_loader_never_blocks_the_caller() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    std::fs::write(root.join("videos/clip.mp4"), b"not a video").expect("write");
    write_image(&root.join("frames/other/000001.jpg"), 20, 20, [0, 0, 0]);
    let gate = root.join("gate");
    let gave_up = root.join("gave-up");
    let tools = root.join("tools");
    std::fs::create_dir_all(&tools).expect("mkdir");
    let gated = format!(
        "#!/bin/sh\ni=0\nuntil rm {gate:?} 2>/dev/null; do\n  i=$((i+1))\n  \
         if [ $i -gt 300 ]; then touch {gave_up:?}; exit 1; fi\n  sleep 0.1\ndone\nexit 1\n"
    );
    for (name, script) in [
        ("ffprobe", gated.as_str()),
        ("ffmpeg", "#!/bin/sh\nexit 1\n"),
    ] {
        std::fs::write(tools.join(name), script).expect("write");
        std::fs::set_permissions(tools.join(name), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    let s = store(root, DatasetMeta::default(), &[("clip", 10.0)])
        .with_ffmpeg(Some(tools.join("ffmpeg")));
    let (tx, rx) = mpsc::channel();
    let loader = FrameLoader::new(s, 16, move || {
        let _ = tx.send(());
    });
    let key = |video: &str, index: u64| FrameKey {
        video: video.into(),
        index,
        position: None,
        max_side: 32,
        fit: None,
        saved: None,
    };
    let open_gate = || std::fs::write(&gate, b"").expect("open the gate");
    loader.request(key("clip", 3));
    loader.request(key("clip", 4));
    loader.prefetch(vec![key("clip", 5)]);
    assert!(loader.get(&key("clip", 3)).is_none());
    assert!(loader.is_pending(&key("clip", 3)));
    // The image asked for after them lands while their decode waits.
    loader.request(key("other", 1));
    rx.recv_timeout(Duration::from_secs(10)).expect("notified");
    assert!(loader.get(&key("other", 1)).is_some_and(|r| r.is_ok()));
    assert!(loader.is_pending(&key("clip", 3)) && loader.is_pending(&key("clip", 4)));
    // One decode run for both requests of the video.
    open_gate();
    rx.recv_timeout(Duration::from_secs(40)).expect("notified");
    rx.recv_timeout(Duration::from_secs(10)).expect("notified");
    let r3 = loader.get(&key("clip", 3)).expect("landed");
    assert!(
        r3.as_ref()
            .as_ref()
            .is_err_and(|w| w.contains("ffmpeg could not decode")),
        "{r3:?}"
    );
    assert!(loader.get(&key("clip", 4)).is_some());
    // The prefetch waited behind the newer requests (they do not drop it: a new list of
    // prefetches does), and is decoded after them, in its own run.
    assert!(loader.is_pending(&key("clip", 5)));
    open_gate();
    rx.recv_timeout(Duration::from_secs(40)).expect("notified");
    assert!(loader.get(&key("clip", 5)).is_some());
    assert!(!gave_up.exists(), "a call waited for the decode");
}

/// A frame name that holds a link to `/dev/zero` or a named pipe is refused by what it is,
/// not read without end, waited on, or passed over as if absent.
#[cfg(unix)]
#[test]
fn special_files_at_frame_names_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("frames/clip")).expect("mkdir");
    let link = root.join("frames/clip/000001.jpg");
    std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
    let s = store(root, DatasetMeta::default(), &[]).with_ffmpeg(None);
    // Found through the dataset, the link is refused for leading out of it...
    let why = missing(s.locate("clip", 1, None));
    assert!(
        why.contains("leads outside the dataset, to /dev/zero"),
        "{why}"
    );
    // ...and read directly, for not being a regular file.
    let why = load_image(&Located::Image(link.clone()), 64, false).expect_err("refused");
    assert!(
        why.contains(&link.display().to_string())
            && why.contains("a character device, not a regular file"),
        "{why}"
    );
    let fifo = root.join("frames/clip/000002.jpg");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let why = load_image(&s.locate("clip", 2, None), 64, false).expect_err("refused");
        assert!(why.contains("a named pipe (FIFO)"), "{why}");
    }
    // A video that is a named pipe is not handed to ffmpeg.
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    let video = root.join("videos/piped.mp4");
    if std::process::Command::new("mkfifo")
        .arg(&video)
        .status()
        .is_ok_and(|s| s.success())
    {
        let why = missing(s.locate("piped", 3, None));
        assert!(why.contains("named pipe (FIFO)"), "{why}");
    }
}

/// A video whose decodes hang (a fake ffmpeg and ffprobe that sleep, through a shell so
/// that the sleep is a child of the killed program): image files are served meanwhile,
/// the hung runs are killed at the time limit, and the video is not tried again in the
/// session: its next frames fail at once, saying why, without running anything.
/// Here ffprobe hangs, so the video is never indexed.
#[cfg(unix)]
#[test]
fn a_hung_video_never_holds_up_images_and_is_not_tried_again() {
    hung_video(None);
}

/// Here the real ffprobe indexes a real video and ffmpeg hangs on its frames.
#[cfg(unix)]
#[test]
fn a_hung_decode_never_holds_up_images_and_is_not_tried_again() {
    let Some(ffmpeg) = ffmpeg_or_note("a_hung_decode_never_holds_up_images") else {
        return;
    };
    let Some(ffprobe) = frameaudit::core::frames::ffprobe_beside(&ffmpeg) else {
        common::skip_note(format_args!(
            "no ffprobe; a_hung_decode_never_holds_up_images skipped"
        ));
        return;
    };
    hung_video(Some((ffmpeg, ffprobe)));
}

/// `real`: the real ffmpeg (to make the video) and ffprobe (to index it); without them
/// both programs hang.
#[cfg(unix)]
fn hung_video(real: Option<(PathBuf, PathBuf)>) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    match &real {
        Some((ffmpeg, _)) => {
            make_video(ffmpeg, root);
            std::fs::rename(root.join("videos/clip.mp4"), root.join("videos/hung.mp4"))
                .expect("rename");
        }
        None => std::fs::write(root.join("videos/hung.mp4"), b"a video that hangs").expect("write"),
    }
    for i in 1..=6u64 {
        write_image(
            &root.join(format!("frames/still/{i:06}.jpg")),
            64,
            36,
            [0, 0, 0],
        );
    }
    let tools = root.join("tools");
    std::fs::create_dir_all(&tools).expect("mkdir");
    let log = root.join("runs.log");
    for name in ["ffmpeg", "ffprobe"] {
        let p = tools.join(name);
        if let (Some((_, ffprobe)), "ffprobe") = (&real, name) {
            std::os::unix::fs::symlink(ffprobe, &p).expect("symlink");
            continue;
        }
        let script = format!("#!/bin/sh\necho {name} >> '{}'\nsleep 600\n", log.display());
        std::fs::write(&p, script).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let runs = || {
        std::fs::read_to_string(&log)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    let limit = Duration::from_secs(4);
    let s = store(root, DatasetMeta::default(), &[("hung", 10.0)])
        .with_ffmpeg(Some(tools.join("ffmpeg")))
        .with_decode_timeout(limit);
    let (tx, rx) = mpsc::channel();
    let loader = FrameLoader::new(s.clone(), 64, move || {
        let _ = tx.send(());
    });
    let key = |video: &str, index: u64| FrameKey {
        video: video.into(),
        index,
        position: None,
        max_side: 32,
        fit: None,
        saved: None,
    };
    // Hang guards only: far longer than anything here needs.
    let wait = |what: &dyn Fn() -> bool| {
        let started = Instant::now();
        while !what() {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "nothing landed for 120 s"
            );
            let _ = rx.recv_timeout(Duration::from_millis(100));
        }
    };
    for i in 1..=3 {
        loader.request(key("hung", i));
    }
    for i in 1..=6 {
        loader.request(key("still", i));
    }
    // Every image lands while the video's frames are still decoding.
    wait(&|| (1..=6).all(|i| loader.get(&key("still", i)).is_some()));
    for i in 1..=6 {
        let r = loader.get(&key("still", i)).expect("landed");
        assert!(r.is_ok(), "{r:?}");
    }
    assert!(
        (1..=3).all(|i| loader.is_pending(&key("hung", i))),
        "the hung video's frames finished before the images"
    );
    // The hung run is killed at the limit, and says so.
    wait(&|| (1..=3).all(|i| loader.get(&key("hung", i)).is_some()));
    let r = loader.get(&key("hung", 1)).expect("landed");
    let why = r.as_ref().as_ref().expect_err("timed out");
    assert!(why.contains("timed out after 4 s"), "{why}");
    let before = runs();
    assert!(before >= 1);
    // Asked again (another frame, and through another copy of the store): answered
    // without running anything, with the reason.
    loader.request(key("hung", 7));
    wait(&|| loader.get(&key("hung", 7)).is_some());
    let r = loader.get(&key("hung", 7)).expect("landed");
    let why = r.as_ref().as_ref().expect_err("not tried again");
    assert_eq!(
        why,
        "decoding hung.mp4 timed out after 4 s earlier in this session; not tried again"
    );
    let failed = s.decode_frames("hung", &[8, 9]);
    assert_eq!(failed.len(), 2);
    assert!(failed.iter().all(|(_, w)| w.contains("not tried again")));
    let why = load_image(&s.locate("hung", 10, None), 32, true).expect_err("refused");
    assert!(why.contains("not tried again"), "{why}");
    assert_eq!(runs(), before, "the hung video was run again");
    // Images still land.
    loader.request(key("still", 1));
    assert!(loader.get(&key("still", 1)).is_some_and(|r| r.is_ok()));
}

/// Writes `bytes` bytes at `path` (creating its folders), last written and read at
/// `secs` after the epoch.
fn aged_file(path: &Path, bytes: usize, secs: u64) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, vec![7u8; bytes]).expect("write");
    let t = std::time::UNIX_EPOCH + Duration::from_secs(secs);
    let f = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open");
    f.set_times(std::fs::FileTimes::new().set_accessed(t).set_modified(t))
        .expect("set times");
}

/// The names of the files below `dir`, relative to it, sorted.
fn files_below(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&p, base, out);
            } else {
                out.push(p.strip_prefix(base).expect("below").display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

const LATER: u64 = 4_000_000_000;

/// Past its limit the decode cache loses the frames used longest ago (by the later of
/// their write and their last read), down to 80% of the limit; what is not a decoded frame
/// (a decode's temporary file, anything else) is neither counted nor removed.
#[test]
fn the_frame_cache_is_held_to_its_limit_least_recently_used_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let frames = root.join(".frameaudit-cache/frames");
    for i in 0..10u64 {
        aged_file(
            &frames.join(format!("v/{i}.jpg")),
            1000,
            1_000_000 + i * 3600,
        );
    }
    // A video whose name holds a folder; used between frames 4 and 5.
    aged_file(&frames.join("a/b/7.jpg"), 1000, 1_000_000 + 4 * 3600 + 60);
    aged_file(&frames.join("v/.decode-x1.jpg"), 5000, 1);
    aged_file(&frames.join("v/notes.txt"), 5000, 1);
    // Frame 0 was shown last: read after every other was written.
    let f = std::fs::File::open(frames.join("v/0.jpg")).expect("open");
    let t = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000 + 20 * 3600);
    f.set_times(std::fs::FileTimes::new().set_accessed(t))
        .expect("set atime");

    // Within the limit: nothing goes.
    let now = std::time::UNIX_EPOCH + Duration::from_secs(LATER);
    let t = trim_frame_cache(root, 11_000, now);
    assert_eq!(
        t,
        Trimmed {
            before: 11_000,
            after: 11_000,
            removed: 0
        }
    );
    // Past it: down to 4000 bytes of the 5000 allowed, the least recently used first.
    let t = trim_frame_cache(root, 5000, now);
    assert_eq!(
        t,
        Trimmed {
            before: 11_000,
            after: 4000,
            removed: 7
        }
    );
    assert_eq!(
        files_below(&frames),
        [
            "v/.decode-x1.jpg",
            "v/0.jpg",
            "v/7.jpg",
            "v/8.jpg",
            "v/9.jpg",
            "v/notes.txt"
        ]
    );
}

/// A frame written or read within the last minute stays, whatever the limit: another
/// frameaudit on the same dataset may have just decoded it.
#[test]
fn the_frame_cache_keeps_what_was_used_in_the_last_minute() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let frames = root.join(".frameaudit-cache/frames");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    aged_file(&frames.join("v/1.jpg"), 1000, now - 3600);
    aged_file(&frames.join("v/2.jpg"), 1000, now - 10);
    let t = trim_frame_cache(root, 0, std::time::SystemTime::now());
    assert_eq!(t.removed, 1);
    assert_eq!(files_below(&frames), ["v/2.jpg"]);
}

/// The dataset is untrusted: a link in the cache (a video's folder, a frame, the cache
/// itself) is neither followed nor removed, so nothing outside the cache is touched.
#[cfg(unix)]
#[test]
fn trimming_the_frame_cache_never_follows_a_link() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = dir.path().join("outside");
    for i in 1..=3 {
        aged_file(&outside.join(format!("{i}.jpg")), 1000, 1_000_000);
    }
    let root = dir.path().join("ds");
    let frames = root.join(".frameaudit-cache/frames");
    aged_file(&frames.join("w/5.jpg"), 1000, 1_000_000);
    symlink(&outside, frames.join("v")).expect("link a video folder out");
    symlink(outside.join("2.jpg"), frames.join("w/2.jpg")).expect("link a frame out");
    let now = std::time::UNIX_EPOCH + Duration::from_secs(LATER);
    let t = trim_frame_cache(&root, 0, now);
    assert_eq!(
        t,
        Trimmed {
            before: 1000,
            after: 0,
            removed: 1
        }
    );
    assert_eq!(files_below(&outside), ["1.jpg", "2.jpg", "3.jpg"]);
    assert!(frames.join("w/2.jpg").is_symlink() && frames.join("v").is_symlink());

    // The cache folder itself a link out: nothing at all.
    let root2 = dir.path().join("ds2");
    std::fs::create_dir_all(&root2).expect("mkdir");
    let cache_out = dir.path().join("cache-out");
    aged_file(&cache_out.join("frames/v/1.jpg"), 1000, 1_000_000);
    symlink(&cache_out, root2.join(".frameaudit-cache")).expect("link the cache out");
    assert_eq!(trim_frame_cache(&root2, 0, now), Trimmed::default());
    assert_eq!(files_below(&cache_out), ["frames/v/1.jpg"]);
    // And `frames` a link out.
    let root3 = dir.path().join("ds3");
    std::fs::create_dir_all(root3.join(".frameaudit-cache")).expect("mkdir");
    symlink(
        cache_out.join("frames"),
        root3.join(".frameaudit-cache/frames"),
    )
    .expect("link");
    assert_eq!(trim_frame_cache(&root3, 0, now), Trimmed::default());
    assert_eq!(files_below(&cache_out), ["frames/v/1.jpg"]);
}

/// Through the decoder, as the audit screens fill the cache: a frame read from the cache
/// is marked as used (its access time, not its modification time), and a decode that takes
/// the cache past its limit removes the frames used longest ago, never the ones it wrote.
#[test]
fn decoding_past_the_frame_cache_limit_removes_the_least_recently_used() {
    let Some(ffmpeg) =
        ffmpeg_or_note("decoding_past_the_frame_cache_limit_removes_the_least_recently_used")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    make_video(&ffmpeg, root);
    let frames = root.join(".frameaudit-cache/frames/clip");
    let size_of = |names: &mut dyn Iterator<Item = u64>| -> u64 {
        names
            .map(|i| {
                std::fs::metadata(frames.join(format!("{i}.jpg")))
                    .map(|m| m.len())
                    .unwrap_or(0)
            })
            .sum()
    };
    // Frames 0..10 decoded without a limit, then aged by an hour and more, frame 0 the
    // oldest.
    let s = store(root, DatasetMeta::default(), &[("clip", 10.0)]).with_frame_cache_limit(None);
    for i in 0..10 {
        load_image(&s.locate("clip", i, None), 1000, true).expect("decodes");
    }
    let first = size_of(&mut (0..10));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    // The video older still, so that the aged frames are not taken for stale ones.
    let t = std::time::UNIX_EPOCH + Duration::from_secs(now - 3 * 3600);
    let f = std::fs::File::options()
        .write(true)
        .open(root.join("videos/clip.mp4"))
        .expect("open");
    f.set_times(std::fs::FileTimes::new().set_accessed(t).set_modified(t))
        .expect("age");
    for i in 0..10 {
        let p = frames.join(format!("{i}.jpg"));
        let t = std::time::UNIX_EPOCH + Duration::from_secs(now - 7200 + i * 60);
        let f = std::fs::File::options().write(true).open(&p).expect("open");
        f.set_times(std::fs::FileTimes::new().set_accessed(t).set_modified(t))
            .expect("age");
    }
    // Frame 3 shown again: read from the cache, it becomes the most recently used of them.
    let p3 = frames.join("3.jpg");
    let modified = std::fs::metadata(&p3)
        .and_then(|m| m.modified())
        .expect("mtime");
    let s = s.with_frame_cache_limit(Some(first * 3 / 2));
    load_image(&s.locate("clip", 3, None), 1000, true).expect("from the cache");
    let meta = std::fs::metadata(&p3).expect("meta");
    assert_eq!(
        meta.modified().expect("mtime"),
        modified,
        "not decoded again"
    );
    let read = meta.accessed().expect("atime");
    assert!(
        read.elapsed().unwrap_or_default() < Duration::from_secs(600),
        "the read marks frame 3 used: {read:?}"
    );
    // Read again: a file system mounted `relatime` leaves the read time as it is (it was
    // set after the last change), so only frameaudit's own mark moves it.
    std::thread::sleep(Duration::from_millis(30));
    load_image(&s.locate("clip", 3, None), 1000, true).expect("from the cache");
    let again = std::fs::metadata(&p3)
        .and_then(|m| m.accessed())
        .expect("atime");
    assert!(
        again > read,
        "the second read marks it too: {read:?} {again:?}"
    );
    // Ten more frames: past 1.5 times the first ten, so the cache is trimmed to 1.2 times.
    for i in 20..30 {
        load_image(&s.locate("clip", i, None), 1000, true).expect("decodes");
    }
    let kept: Vec<u64> = (0..30)
        .filter(|i| frames.join(format!("{i}.jpg")).exists())
        .collect();
    assert!(kept.ends_with(&(20..30).collect::<Vec<_>>()), "{kept:?}");
    assert!(kept.contains(&3), "the frame read lately stays: {kept:?}");
    assert!(!kept.contains(&0), "the oldest goes: {kept:?}");
    let total = size_of(&mut kept.iter().copied());
    assert!(total <= first * 3 / 2 * 4 / 5 + 1, "{total} of {first}");
}
