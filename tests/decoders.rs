//! The decoder is part of the rule (issue 40): on the three awkward videos of the issue,
//! generated here (an MP4 edit list, a variable frame rate, 29.97 fps), the probe's count of
//! each decoder against decord, PyAV and (where installed) torchcodec run in Python, and an
//! lmms-eval qwen2_5_vl run over them: assumed where decord and torchcodec disagree and the
//! run does not say which decoded, exact once a recorder log says it.

mod common;
mod videokit;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{frameaudit, stderr};
use frameaudit::core::frames::{VideoProbe, probe_video_with};
use frameaudit::core::rules::decoder::{Decoder, decoders_disagree};
use serde_json::{Value, json};

/// The three videos of issue 40, 32x32: (edit list, variable rate, 29.97 fps).
struct Awkward {
    edl: PathBuf,
    vfr: PathBuf,
    ntsc: PathBuf,
}

/// Makes the videos exactly as the issue gives them, in `dir/videomme/data/`; `None`, with
/// a note, without ffmpeg or its libx264.
fn awkward(test: &str, dir: &Path) -> Option<(Awkward, PathBuf)> {
    let (ff, ffprobe) = videokit::tools(test)?;
    let encoders = Command::new(&ff)
        .args(["-hide_banner", "-encoders"])
        .output()
        .ok()?;
    if !String::from_utf8_lossy(&encoders.stdout).contains("libx264") {
        common::skip_note(format_args!("{test} skipped: this ffmpeg has no libx264"));
        return None;
    }
    let data = dir.join("videomme/data");
    std::fs::create_dir_all(&data).expect("mkdir");
    let s = |p: &Path| p.to_str().expect("utf-8 temp path").to_string();
    let src = dir.join("src.mp4");
    let v = Awkward {
        edl: data.join("edl.mp4"),
        vfr: data.join("vfr.mp4"),
        ntsc: data.join("ntsc.mp4"),
    };
    let x264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "2"];
    let run = |args: Vec<String>| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        videokit::ffmpeg(&ff, &a);
    };
    let args = |head: &[&str], tail: &[&str], out: &Path| -> Vec<String> {
        head.iter()
            .chain(tail)
            .map(|x| x.to_string())
            .chain([s(out)])
            .collect()
    };
    let lavfi = |rate: &str| format!("testsrc2=size=32x32:rate={rate}");
    run(args(
        &["-f", "lavfi", "-i", &lavfi("25"), "-frames:v", "1100"],
        &[&x264[..], &["-g", "50"]].concat(),
        &src,
    ));
    run(args(
        &["-ss", "3.3", "-i", &s(&src)],
        &["-c", "copy"],
        &v.edl,
    ));
    run(args(
        &[
            "-f",
            "lavfi",
            "-i",
            &lavfi("30"),
            "-frames:v",
            "802",
            "-vf",
            "setpts='if(lt(N,600),N/30,20+(N-600)/5)/TB'",
            "-fps_mode",
            "vfr",
        ],
        &x264,
        &v.vfr,
    ));
    run(args(
        &[
            "-f",
            "lavfi",
            "-i",
            &lavfi("30000/1001"),
            "-frames:v",
            "1796",
        ],
        &x264,
        &v.ntsc,
    ));
    Some((v, ffprobe))
}

/// What decord, PyAV and torchcodec (when importable) report of each file, by one python3
/// run; `None`, with a note, without decord or PyAV.
fn python_counts(test: &str, files: &[&Path]) -> Option<Vec<Value>> {
    let script = r#"
import sys, json, importlib.util
import decord, av
tc = importlib.util.find_spec("torchcodec") is not None
if tc:
    from torchcodec.decoders import VideoDecoder
for p in sys.argv[1:]:
    vr = decord.VideoReader(p)
    out = {"decord": [len(vr), vr.get_avg_fps()]}
    with av.open(p) as c:
        s = c.streams.video[0]
        out["pyav"] = [s.frames, float(s.average_rate)]
        out["pyav_decoded"] = sum(1 for _ in c.decode(s))
    if tc:
        m = VideoDecoder(p).metadata
        out["torchcodec"] = [m.num_frames, m.average_fps]
        a = VideoDecoder(p, seek_mode="approximate").metadata
        out["torchcodec_approx"] = [a.num_frames, a.average_fps]
    print(json.dumps(out))
"#;
    let ok = Command::new("python3")
        .args(["-c", "import decord, av"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip_note(format_args!(
            "{test}: the Python checks are skipped: python3 with decord and av is not installed (python3 -m pip install decord av)"
        ));
        return None;
    }
    let lines: Vec<Value> = videokit::python(script, files)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    if lines.first().is_some_and(|l| l.get("torchcodec").is_none()) {
        common::skip_note(format_args!(
            "{test}: torchcodec is not importable here; its counts are checked against its source's rules only (python3 -m pip install torchcodec)"
        ));
    }
    Some(lines)
}

fn count(p: &VideoProbe, d: Decoder) -> (u64, Option<f64>, Option<u64>) {
    let c = p
        .decoders
        .get(&d)
        .expect("a count for every decoder of an MP4");
    (c.num_frames, c.fps, c.decodable)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
}

#[test]
fn the_probe_counts_as_each_decoder_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some((v, ffprobe)) = awkward("the_probe_counts_as_each_decoder_counts", dir.path()) else {
        return;
    };
    let files = [v.edl.as_path(), v.vfr.as_path(), v.ntsc.as_path()];
    let probes: Vec<VideoProbe> = files
        .iter()
        .map(|f| probe_video_with(&ffprobe, f).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let (edl, vfr, ntsc) = (&probes[0], &probes[1], &probes[2]);

    // The edit list discards packets: torchcodec and PyAV's decoder skip them, decord and
    // the header count them.
    assert!(edl.discarded_packets > 0);
    let (tc_n, _, _) = count(edl, Decoder::Torchcodec);
    assert_eq!(tc_n, edl.num_frames - edl.discarded_packets);
    assert_eq!(count(edl, Decoder::Pyav).2, Some(tc_n));
    assert!(decoders_disagree(&edl.decoders));
    // The variable rate: the same count, another average rate for torchcodec, and the
    // base rate for its approximate mode.
    assert_eq!(count(vfr, Decoder::Torchcodec).0, vfr.num_frames);
    assert!(!close(
        count(vfr, Decoder::Torchcodec).1.expect("fps"),
        vfr.fps
    ));
    assert!(decoders_disagree(&vfr.decoders));
    // 29.97 fps: every decoder agrees.
    assert_eq!(ntsc.discarded_packets, 0);
    assert!(!decoders_disagree(&ntsc.decoders), "{:?}", ntsc.decoders);

    let Some(py) = python_counts("the_probe_counts_as_each_decoder_counts", &files) else {
        return;
    };
    for (p, (py, file)) in probes.iter().zip(py.iter().zip(files)) {
        let n = |v: &Value, i: usize| v[i].as_u64().expect("count");
        let f = |v: &Value| v[1].as_f64().expect("fps");
        let at = file.display();
        assert_eq!(p.num_frames, n(&py["decord"], 0), "decord count of {at}");
        assert!(close(p.fps, f(&py["decord"])), "decord fps of {at}");
        let (h, hf, decodable) = count(p, Decoder::Pyav);
        assert_eq!(h, n(&py["pyav"], 0), "PyAV header count of {at}");
        assert!(close(hf.expect("fps"), f(&py["pyav"])), "PyAV rate of {at}");
        assert_eq!(
            decodable.unwrap_or(h),
            py["pyav_decoded"].as_u64().expect("n"),
            "PyAV decoded count of {at}"
        );
        for (d, key) in [
            (Decoder::Torchcodec, "torchcodec"),
            (Decoder::TorchcodecApprox, "torchcodec_approx"),
        ] {
            if let Some(t) = py.get(key) {
                let (tn, tf, _) = count(p, d);
                assert_eq!(tn, n(t, 0), "{key} count of {at}");
                assert!(close(tf.expect("fps"), f(t)), "{key} fps of {at}");
            }
        }
    }
}

/// An lmms-eval 0.7.3 chat qwen2_5_vl run at 16 frames over the three videos (items 001-1,
/// 002-1, 003-1), written under `logs`.
fn qwen_run(logs: &Path) {
    lmms_run(
        logs,
        "qwen2_5_vl",
        "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=16",
        "lmms_eval.models.chat.qwen2_5_vl.Qwen2_5_VL (chat)",
    );
}

/// An lmms-eval 0.7.3 run of `wrapper` with `args` (whose `pretrained` names the model) over
/// the three videos (items 001-1, 002-1, 003-1), written under `logs`.
fn lmms_run(logs: &Path, wrapper: &str, args: &str, backend: &str) {
    let pretrained = args
        .split(',')
        .find_map(|kv| kv.strip_prefix("pretrained="))
        .expect("pretrained");
    let sanitized = pretrained.replace('/', "__");
    let dir = logs.join(&sanitized);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let results = json!({
        "results": {"videomme": {"alias": "videomme", "videomme_perception_score,none": 100.0,
            "videomme_perception_score_stderr,none": "N/A"}},
        "config": {"model": wrapper, "model_args": args, "model_backend": backend,
            "batch_size": "1", "gen_kwargs": ""},
        "git_hash": null, "lmms_eval_version": "0.7.3", "date": "20260101_000000",
        "model_source": wrapper, "model_name": pretrained,
        "model_name_sanitized": sanitized,
    });
    std::fs::write(
        dir.join("20260101_000000_results.json"),
        serde_json::to_string_pretty(&results).expect("json"),
    )
    .expect("write results");
    let lines: Vec<String> = [("001-1", "edl"), ("002-1", "ntsc"), ("003-1", "vfr")]
        .iter()
        .enumerate()
        .map(|(i, (qid, video))| {
            json!({"doc_id": i, "target": "A", "filtered_resps": "A", "token_counts": [null],
                "doc_hash": "0", "videomme_perception_score": {"question_id": qid,
                "duration": "short", "category": "Knowledge", "sub_category": "History",
                "task_category": "Counting Problem", "pred_answer": "A", "answer": "A",
                "score": 1.0, "videoID": video},
                "input": format!("Question {qid}?\nA. a\nB. b\nC. c\nD. d\nThe best answer is:")})
            .to_string()
        })
        .collect();
    std::fs::write(
        dir.join("20260101_000000_samples_videomme.jsonl"),
        lines.join("\n") + "\n",
    )
    .expect("write samples");
}

/// The recorder log of that run: `decodes` are (reader, video file, indices).
fn recorder_log(path: &Path, decodes: &[(&str, &str, &[u64])]) {
    recorder_log_with(path, &[json!({"event": "start", "pid": 1})], decodes);
}

/// [`recorder_log`] with the lines `after_run` (the processes' `start` lines,
/// `reader_choice`...) after the run line, as the recorder writes them.
fn recorder_log_with(path: &Path, after_run: &[Value], decodes: &[(&str, &str, &[u64])]) {
    recorder_log_of(
        path,
        "qwen2_5_vl",
        "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=16",
        after_run,
        decodes,
    );
}

/// The recorder log of a run of `wrapper` with `args`.
fn recorder_log_of(
    path: &Path,
    wrapper: &str,
    args: &str,
    after_run: &[Value],
    decodes: &[(&str, &str, &[u64])],
) {
    let schema = "frameaudit/frames-log@1";
    let mut lines = vec![
        json!({"schema": schema, "event": "run", "pid": 1, "command": ["lmms-eval", "--model",
            wrapper, "--model_args", args, "--tasks", "videomme"]}),
    ];
    lines.extend(after_run.iter().cloned());
    for (reader, video, indices) in decodes {
        lines.push(json!({"event": "decode", "pid": 1, "reader": reader,
            "video": format!("/data/videomme/data/{video}"), "indices": indices}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("write log");
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The frames the one configuration of `item` gets, as `frames --json` gives them.
fn frames_of(ds: &Path, item: &str) -> Value {
    let o = frameaudit(&["frames", &s(ds), item, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).expect("json");
    j["configs"][0].clone()
}

// qwen_vl_utils 0.0.14 at nframes=16 on the edit-list video, by its own smart_nframes and
// torch.linspace(0, T-1, 16).round() (/work/notes/i40/vectors/qwen3_vl_simple.out, which runs
// the wheel's code): over torchcodec's 1017 frames, and over decord's 1050.
const EDL_TORCHCODEC_16: [u64; 16] = [
    0, 68, 135, 203, 271, 339, 406, 474, 542, 610, 677, 745, 813, 881, 948, 1016,
];
const EDL_DECORD_16: [u64; 16] = [
    0, 70, 140, 210, 280, 350, 420, 490, 559, 629, 699, 769, 839, 909, 979, 1049,
];

#[test]
fn a_qwen_run_over_an_edit_list_is_assumed_until_the_decoder_is_known() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let videos = tmp.path().join("videos");
    let test = "a_qwen_run_over_an_edit_list_is_assumed_until_the_decoder_is_known";
    let Some((v, ffprobe)) = awkward(test, &videos) else {
        return;
    };
    let edl = probe_video_with(&ffprobe, &v.edl).unwrap_or_else(|e| panic!("{e}"));
    let logs = tmp.path().join("logs");
    qwen_run(&logs);
    let import = |out: &Path, log: Option<&Path>| {
        let mut args = vec![
            "import".to_string(),
            "lmms-eval".into(),
            s(&logs),
            "-o".into(),
            s(out),
            "--videos".into(),
            s(&videos),
        ];
        if let Some(l) = log {
            args.extend(["--frames-log".into(), s(l)]);
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = frameaudit(&a);
        assert!(o.status.success(), "{}", stderr(&o));
    };

    // Without a log: lmms-eval 0.7 may have had torchcodec or decord under qwen_vl_utils.
    let ds = tmp.path().join("ds");
    import(&ds, None);
    let items = std::fs::read_to_string(ds.join("items.jsonl")).expect("items");
    for line in items.lines() {
        let item: Value = serde_json::from_str(line).expect("item");
        // Only the videos the decoders disagree on carry their counts.
        assert_eq!(
            item.get("decoders").is_some(),
            item["item_id"] != "002-1",
            "{line}"
        );
    }
    let c = frames_of(&ds, "001-1");
    assert_eq!(c["provenance"], "assumed", "{c}");
    let why = c["why"].as_str().expect("why");
    let both = format!(
        "decord {} frames, torchcodec {}: the run does not say which decoded",
        edl.num_frames,
        count(&edl, Decoder::Torchcodec).0
    );
    assert!(why.contains(&both), "{why}");
    assert_eq!(c["indices"], json!(EDL_TORCHCODEC_16), "{c}");
    assert!(
        c["rule"]
            .as_str()
            .expect("rule")
            .contains("budget clamped with decord's count, decoded with torchcodec or decord"),
        "{c}"
    );
    // The variable rate: the counts agree, so nframes frames are the same either way.
    let c = frames_of(&ds, "003-1");
    assert_eq!(c["provenance"], "reproduced", "{c}");
    // 29.97 fps: every decoder agrees, nothing changes.
    let c = frames_of(&ds, "002-1");
    assert_eq!(c["provenance"], "reproduced", "{c}");
    let o = frameaudit(&["frames", &s(&ds), "001-1", "--explain"]);
    let text = common::stdout(&o);
    println!("{text}");
    assert!(text.contains("[ASSUMED]") && text.contains(&both), "{text}");

    // A recorder log whose decodes read with torchcodec (the 29.97 video's only): the run's
    // decoder is known, so the edit-list video's frames are torchcodec's, reproduced.
    let log = tmp.path().join("frames.jsonl");
    let ntsc16: Vec<u64> = frames_of(&ds, "002-1")["indices"]
        .as_array()
        .expect("indices")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    recorder_log(&log, &[("torchcodec", "ntsc.mp4", &ntsc16)]);
    let known = tmp.path().join("known");
    import(&known, Some(&log));
    let c = frames_of(&known, "001-1");
    assert_eq!(c["provenance"], "reproduced", "{c}");
    assert_eq!(c["indices"], json!(EDL_TORCHCODEC_16), "{c}");
    let rule = c["rule"].as_str().expect("rule");
    println!("{rule}");
    assert!(
        rule.contains(&format!(
            "decoded with torchcodec (decord {} frames, torchcodec {})",
            edl.num_frames,
            count(&edl, Decoder::Torchcodec).0
        )),
        "{rule}"
    );
    assert_eq!(frames_of(&known, "002-1")["provenance"], "recorded");

    // A log whose decodes read with decord: decord's frames, reproduced, with the caveat of
    // the edit list.
    recorder_log(&log, &[("decord", "ntsc.mp4", &ntsc16)]);
    let by_decord = tmp.path().join("by_decord");
    import(&by_decord, Some(&log));
    let c = frames_of(&by_decord, "001-1");
    assert_eq!(c["provenance"], "reproduced", "{c}");
    assert_eq!(c["indices"], json!(EDL_DECORD_16), "{c}");
    assert!(
        c["rule"].as_str().expect("rule").contains("edit list"),
        "{c}"
    );
}

/// `frameaudit import lmms-eval LOGS -o OUT --videos VIDEOS [--frames-log LOG]`.
fn import_run(logs: &Path, videos: &Path, out: &Path, log: Option<&Path>) {
    let mut args = vec![
        "import".to_string(),
        "lmms-eval".into(),
        s(logs),
        "-o".into(),
        s(out),
        "--videos".into(),
        s(videos),
    ];
    if let Some(l) = log {
        args.extend(["--frames-log".into(), s(l)]);
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = frameaudit(&a);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn what_picked_the_reader_makes_the_decoder_known_without_a_decode() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let videos = tmp.path().join("videos");
    let test = "what_picked_the_reader_makes_the_decoder_known_without_a_decode";
    if awkward(test, &videos).is_none() {
        return;
    }
    let logs = tmp.path().join("logs");
    qwen_run(&logs);
    let log = tmp.path().join("frames.jsonl");
    // A log of the run whose lines are `after_run` and no decode: the edit-list item's frames
    // and the rule's text.
    let edl = |name: &str, after_run: &[Value]| -> (Value, String) {
        recorder_log_with(&log, after_run, &[]);
        let out = tmp.path().join(name);
        import_run(&logs, &videos, &out, Some(&log));
        let c = frames_of(&out, "001-1");
        let text = format!("{} / {}", c["rule"], c["why"]);
        (c, text)
    };
    let start = |env: Value, versions: Value| json!({"event": "start", "pid": 7, "env": env, "versions": versions});
    let both = json!({"decord": "0.6.0", "torchcodec": "0.17.0"});

    // qwen_vl_utils logged its choice: torchcodec.
    let (c, text) = edl(
        "choice",
        &[
            start(json!({}), both.clone()),
            json!({"event": "reader_choice", "pid": 7, "reader": "torchcodec", "forced": false}),
        ],
    );
    assert_eq!(c["provenance"], "reproduced", "{c}");
    assert_eq!(c["indices"], json!(EDL_TORCHCODEC_16), "{c}");
    assert!(
        text.contains("logs qwen_vl_utils' choice of reader: torchcodec"),
        "{text}"
    );
    // FORCE_QWENVL_VIDEO_READER=decord in the environment, though torchcodec is installed.
    let (c, text) = edl(
        "forced",
        &[start(
            json!({"FORCE_QWENVL_VIDEO_READER": "decord"}),
            both.clone(),
        )],
    );
    assert_eq!(c["provenance"], "reproduced", "{c}");
    assert_eq!(c["indices"], json!(EDL_DECORD_16), "{c}");
    assert!(text.contains("FORCE_QWENVL_VIDEO_READER=decord"), "{text}");
    // Nothing forced and no torchcodec installed: decord.
    let (c, text) = edl(
        "installed",
        &[start(json!({}), json!({"decord": "0.6.0", "av": "18.1.0"}))],
    );
    assert_eq!(c["provenance"], "reproduced", "{c}");
    assert_eq!(c["indices"], json!(EDL_DECORD_16), "{c}");
    assert!(text.contains("decord 0.6.0 installed"), "{text}");
    // Processes that disagree on the variable, or a recorder that logs no environment:
    // still unknown.
    let (c, _) = edl(
        "differ",
        &[
            start(json!({"FORCE_QWENVL_VIDEO_READER": "decord"}), both.clone()),
            start(json!({}), both.clone()),
        ],
    );
    assert_eq!(c["provenance"], "assumed", "{c}");
    let (c, _) = edl("old", &[json!({"event": "start", "pid": 7})]);
    assert_eq!(c["provenance"], "assumed", "{c}");
}

#[test]
fn the_new_wrappers_import_with_their_decoders() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let videos = tmp.path().join("videos");
    let test = "the_new_wrappers_import_with_their_decoders";
    let Some((v, ffprobe)) = awkward(test, &videos) else {
        return;
    };
    let edl = probe_video_with(&ffprobe, &v.edl).unwrap_or_else(|e| panic!("{e}"));
    let (n, tc) = (edl.num_frames, count(&edl, Decoder::Torchcodec).0);
    // The edit-list item of one wrapper's run, imported on its own (and with a log).
    let run = |name: &str, wrapper: &str, args: &str, backend: &str, log: Option<&[Value]>| {
        let logs = tmp.path().join(format!("logs_{name}"));
        lmms_run(&logs, wrapper, args, backend);
        let frames_log = log.map(|after| {
            let p = tmp.path().join(format!("{name}.jsonl"));
            recorder_log_of(&p, wrapper, args, after, &[]);
            p
        });
        let out = tmp.path().join(name);
        import_run(&logs, &videos, &out, frames_log.as_deref());
        let c = frames_of(&out, "001-1");
        let text = format!("{} / {}", c["rule"], c["why"]);
        println!("{name}: {text}");
        (c, text)
    };
    let linspace = |t: u64, k: u64| -> Vec<u64> { (0..k).map(|i| i * (t - 1) / (k - 1)).collect() };

    // llava_onevision2's fixed_num_frames (refused before for want of a budget): nframes =
    // min(K, cv2's count), then qwen_vl_utils' reader.
    let (c, text) = run(
        "lo2",
        "llava_onevision2",
        "pretrained=lmms-lab-encoder/LLaVA-OneVision-2-8B-Instruct,fixed_num_frames=16",
        "lmms_eval.models.chat.llava_onevision2.Llava_OneVision2 (chat)",
        None,
    );
    assert_eq!(c["provenance"], "assumed", "{c}");
    assert_eq!(c["indices"], json!(EDL_TORCHCODEC_16), "{c}");
    assert!(
        text.contains("budget clamped with cv2's count, decoded with torchcodec or decord"),
        "{text}"
    );
    // gemma3: lmms-eval's read_video, PyAV unless LMMS_VIDEO_DECODE_BACKEND says torchcodec.
    // PyAV asks for the header's linspace and drops what does not decode.
    let gemma3 = (
        "gemma3",
        "pretrained=google/gemma-3-4b-it,max_num_frames=16",
        "lmms_eval.models.simple.gemma3.Gemma3 (simple)",
    );
    let (c, text) = run("g3", gemma3.0, gemma3.1, gemma3.2, None);
    assert_eq!(c["provenance"], "assumed", "{c}");
    let pyav: Vec<u64> = linspace(n, 16).into_iter().filter(|&i| i < tc).collect();
    assert_eq!(pyav.len(), 15);
    assert_eq!(c["indices"], json!(pyav), "{c}");
    assert!(
        text.contains(&format!("torchcodec {tc} frames, PyAV {n} ({tc} decode)")),
        "{text}"
    );
    // A log whose processes had LMMS_VIDEO_DECODE_BACKEND=torchcodec: torchcodec's frames.
    let env = json!({"event": "start", "pid": 2,
        "env": {"LMMS_VIDEO_DECODE_BACKEND": "torchcodec"}, "versions": {"av": "18.1.0"}});
    let (c, text) = run("g3_tc", gemma3.0, gemma3.1, gemma3.2, Some(&[env]));
    assert_eq!(c["provenance"], "reproduced", "{c}");
    assert_eq!(c["indices"], json!(linspace(tc, 16)), "{c}");
    assert!(
        text.contains("LMMS_VIDEO_DECODE_BACKEND=torchcodec"),
        "{text}"
    );
    // gemma4: transformers' torchcodec count.
    let (c, _) = run(
        "g4",
        "gemma4",
        "pretrained=google/gemma-4-e4b-it,max_num_frames=16",
        "lmms_eval.models.simple.gemma4.Gemma4 (simple)",
        None,
    );
    assert_eq!(c["provenance"], "reproduced", "{c}");
    assert_eq!(c["indices"], json!(linspace(tc, 16)), "{c}");
    // videollama3's own loader: a frame a second and the last, whatever max_num_frames says.
    let (c, _) = run(
        "vl3",
        "videollama3",
        "pretrained=DAMO-NLP-SG/VideoLLaMA3-7B,max_num_frames=16,use_custom_video_loader=True",
        "lmms_eval.models.simple.videollama3.VideoLLaMA3 (simple)",
        None,
    );
    assert_eq!(c["provenance"], "reproduced", "{c}");
    let mut want: Vec<u64> = (0..).map(|k| 12 + 25 * k).take_while(|&i| i < n).collect();
    want.push(n - 1);
    assert_eq!(c["indices"], json!(want), "{c}");
    // Without its own loader the model's processor decodes: not reproduced.
    let (c, text) = run(
        "vl3_hf",
        "videollama3",
        "pretrained=DAMO-NLP-SG/VideoLLaMA3-7B,max_num_frames=16",
        "lmms_eval.models.simple.videollama3.VideoLLaMA3 (simple)",
        None,
    );
    assert_eq!(c["provenance"], "assumed", "{c}");
    assert!(text.contains("use_custom_video_loader"), "{text}");
}

#[test]
fn a_bad_decoders_field_names_its_line_and_field() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    std::fs::write(
        d.join("cells.jsonl"),
        "{\"model\": \"m\", \"item_id\": \"a\", \"config\": \"8f\", \"frames\": 8, \"pred\": \"A\", \"gold\": \"A\"}\n\
         {\"model\": \"m\", \"item_id\": \"b\", \"config\": \"8f\", \"frames\": 8, \"pred\": \"A\", \"gold\": \"A\"}\n",
    )
    .expect("cells");
    std::fs::write(
        d.join("items.jsonl"),
        "{\"item_id\": \"a\", \"num_frames\": 1050, \"fps\": 25.0, \"decoders\": {\"torchcodec\": {\"num_frames\": 1017, \"fps\": 25.0}}}\n\
         {\"item_id\": \"b\", \"num_frames\": 10, \"decoders\": {\"ffmpeg\": {\"num_frames\": 9}}}\n",
    )
    .expect("items");
    let o = frameaudit(&["validate", &s(d)]);
    let err = format!("{}{}", common::stdout(&o), stderr(&o));
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("items.jsonl") && err.contains(":2") && err.contains("decoders"),
        "{err}"
    );
    assert!(!err.contains(":1:"), "{err}");
}
