//! The audit TUI: a full-screen terminal interface over the audit queue. This module owns
//! the terminal (raw mode, alternate screen, mouse reports; all restored on every exit
//! path including panics) and the event loop; `app` holds the state and the reducer,
//! `view` draws it.

pub mod app;
pub mod fit;
pub mod input;
pub mod kitty;
pub mod research;
pub mod view;

use std::io::{Stdout, Write};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context as _, Result};
use crossterm::event::{Event as TermEvent, KeyEventKind};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use crossterm::{cursor, execute, terminal};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use self::app::{App, AppConfig, Effect, Notice, Planner};
use self::input::keymap::Keymap;
use crate::core::analysis;
use crate::core::audit::{AuditError, AuditHeader, fingerprint, now_rfc3339};
use crate::core::dataset::Dataset;
use crate::core::taxonomy::Taxonomy;
use crate::core::text::sanitize;
use crate::core::workspace::search::{SearchResult, Searcher};
use crate::core::workspace::session::Session;
use crate::core::workspace::{annotator_name, dataset_home, default_audit_path, other_audits};

/// The plan the item screen adds to when `--plan` is not given: beside the audit file,
/// `NAME.audit.jsonl` → `NAME.plan.json`.
pub fn default_plan_path(audit: &std::path::Path) -> std::path::PathBuf {
    let name = audit
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".audit.jsonl")
        .or_else(|| name.strip_suffix(".jsonl"))
        .unwrap_or(&name);
    audit.with_file_name(format!("{stem}.plan.json"))
}
use crate::term::{ImageMode, TuiOptions, no_color_env};

/// How frames are drawn, given the mode asked for and whether `NO_COLOR` is set: half
/// blocks are pictures made of coloured text, noise without colour, so they give way to
/// text stand-ins (which say how to get pictures); real image protocols stay.
pub fn image_mode(asked: ImageMode, no_color: bool) -> ImageMode {
    if no_color && asked == ImageMode::Halfblocks {
        ImageMode::None
    } else {
        asked
    }
}

/// Messages to the event loop.
pub enum Msg {
    /// A key, a click, a resize or a paste.
    Input(TermEvent),
    /// A search result.
    Search(SearchResult),
    /// A researcher view built, or its bootstrap intervals.
    Research(research::ViewReply),
    /// The plan worker's answer: what adding to the plan did.
    Planned(Notice),
    /// Another background job's answer for the status line (a full-size frame written).
    Notice(Notice),
    /// How the terminal draws pictures, once it answered (`term::detect`).
    Terminal(Box<crate::term::detect::Choice>),
    /// The whole dataset, read with the replicates the first screen went without, and
    /// the analyses made from it; or why it was rejected.
    Replicates(Box<Result<(Arc<Dataset>, analysis::Report), anyhow::Error>>),
    /// Something changed in the background (a save finished): redraw.
    Wake,
    /// SIGTERM, SIGHUP or SIGINT: leave as quitting does (what is pending is saved, the
    /// terminal is given back).
    Stop,
}

/// The status line's word that the matrix cache could not be written (the next start
/// reads the cells again).
fn cache_notice(note: &str) -> Msg {
    Msg::Notice(Notice {
        text: sanitize(note).into_owned(),
        error: false,
    })
}

/// Turns the signals that would end the process (and leave the terminal raw, on the
/// alternate screen, reporting the mouse) into a [`Msg::Stop`].
#[cfg(unix)]
fn forward_signals(tx: Sender<Msg>) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT])
        .context("cannot handle SIGTERM")?;
    std::thread::Builder::new()
        .name("frameaudit-signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                let _ = tx.send(Msg::Stop);
            }
        })?;
    Ok(())
}

/// Restores the terminal when dropped (normal exit, `?` errors, panics unwinding).
struct TerminalGuard;

fn restore_terminal() {
    let mut out = std::io::stdout();
    // Every mouse mode crossterm knows is switched off (whichever were on) while the
    // terminal is still raw, so that no click in between is echoed as text.
    let _ = execute!(
        out,
        crossterm::event::DisableMouseCapture,
        crossterm::event::DisableBracketedPaste
    );
    let _ = terminal::disable_raw_mode();
    let _ = execute!(out, terminal::LeaveAlternateScreen, cursor::Show);
    let _ = out.flush();
}

/// Mouse reports of buttons and the wheel only (mode 1000, in SGR coordinates, mode 1006):
/// not crossterm's `EnableMouseCapture`, which also reports every motion of the pointer
/// and would wake the event loop, over SSH too, each time the mouse moves.
struct EnableClickReports;

impl crossterm::Command for EnableClickReports {
    fn write_ansi(&self, f: &mut impl std::fmt::Write) -> std::fmt::Result {
        f.write_str("\x1b[?1000h\x1b[?1006h")
    }

    #[cfg(windows)]
    fn execute_winapi(&self) -> std::io::Result<()> {
        crossterm::Command::execute_winapi(&crossterm::event::EnableMouseCapture)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Builds the app for a dataset: analyses, taxonomy, keymap and the annotator's session.
/// The audit's fingerprint hashes every cell, so it is computed on a thread of its own,
/// past the first screen: a new audit file gets its header when it is known, and an
/// existing one is compared with it then ([`App::settle_fingerprint`]).
pub fn build_app(
    ds: Dataset,
    opts: &TuiOptions,
    wake: impl Fn() + Send + Sync + 'static,
) -> Result<App> {
    let t = std::time::Instant::now();
    let wake = Arc::new(wake);
    let ds = Arc::new(ds);
    let fp = spawn_fingerprint(&ds, &wake)?;
    let params = queue_params(opts);
    let report = analysis::run(&ds.matrix, &params, None);
    crate::core::timing("analyses", t);
    let protocol = ds
        .matrix
        .protocols
        .get(&params.primary)
        .or_else(|| report.analyses.first().map(|a| a.key.protocol))
        .context("the dataset has no analysis to audit")?;
    let taxonomy = Taxonomy::load(opts.taxonomy.as_deref())?;
    let keymap = keymap_for(opts, &taxonomy)?;
    let annotator = annotator_name(opts.annotator.as_deref());
    // The folders of an audit in the dataset are made again, if deleted while it is open,
    // without following a link; a file the user named is theirs, wherever it leads.
    let (path, root) = match &opts.audit {
        Some(p) => (
            p.clone(),
            p.parent()
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default(),
        ),
        None => (own_audit_path(&ds, opts, &annotator)?, dataset_home(&ds)),
    };
    let header = AuditHeader {
        dataset_name: ds.name.clone(),
        // Known by the time the header is written ([`Session::open_pending`]).
        fingerprint: String::new(),
        annotator: annotator.clone(),
        taxonomy_id: taxonomy.id.clone(),
        taxonomy_version: taxonomy.version,
        created_at: now_rfc3339(),
        adjudicates: opts
            .review
            .as_ref()
            .map(|r| r.sources.clone())
            .unwrap_or_default(),
    };
    let opened =
        Session::open_pending_below(&root, &path, &header, Arc::clone(&fp), move || wake());
    let session = match opened {
        Ok(s) => s,
        Err(e @ AuditError::Locked { .. }) => anyhow::bail!("{e}"),
        Err(AuditError::Io {
            source,
            what,
            path: at,
        }) if opts.audit.is_none() && not_writable(&source) => {
            anyhow::bail!(
                "cannot {what} {}: {source}. {}",
                sanitize(&at.display().to_string()),
                audit_elsewhere(&path)
            )
        }
        Err(e) => return Err(e).context("cannot open the audit file"),
    };
    let notices = session
        .warnings
        .iter()
        .map(|w| sanitize(w).into_owned())
        .collect();
    let t = std::time::Instant::now();
    let no_color = no_color_env();
    let app = App::from_config(AppConfig {
        review: opts.review.clone(),
        shard: opts.shard,
        no_color,
        // As asked: `set_images` gives half blocks way under NO_COLOR and notes why.
        images: opts.images,
        research_params: Some(opts.params.clone()),
        other_audits: other_audits(&path),
        plan_path: opts
            .plan
            .clone()
            .unwrap_or_else(|| default_plan_path(&path)),
        fingerprint: Some(fp),
        audit_given: opts.audit.is_some(),
        notices,
        ..AppConfig::new(ds, report, protocol, taxonomy, keymap, session)
    });
    crate::core::timing("queue", t);
    Ok(app)
}

/// The parameters of the analyses the queue is made from: the run's, without intervals or
/// the cascade, which the queue does not need and which would slow the start.
pub fn queue_params(opts: &TuiOptions) -> analysis::params::Params {
    let mut params = opts.params.clone();
    params.bootstrap_b = 0;
    params.sweep = false;
    params.cascade_stages = Some(Vec::new());
    params
}

/// Reads the whole dataset, with the replicate files the first screen went without, and
/// makes the queue's analyses from it, on a thread of its own; the answer goes to the loop
/// as [`Msg::Replicates`]. The matrix cache of the whole dataset is then written: once the
/// answer came, the handle is joined before the program ends, as the cache writer's is;
/// before, quitting does not wait for the read.
fn spawn_replicates(
    deferred: crate::core::dataset::DeferredReplicates,
    first: Arc<Dataset>,
    opts: &TuiOptions,
    tx: Sender<Msg>,
) -> Result<std::thread::JoinHandle<()>> {
    let params = queue_params(opts);
    std::thread::Builder::new()
        .name("frameaudit-replicates".into())
        .spawn(move || {
            // Keys typed meanwhile go first: the parsing threads it starts share its nice
            // value (a refusal leaves the default).
            #[cfg(target_os = "linux")]
            let _ = rustix::process::setpriority_process(None, 5);
            let t = std::time::Instant::now();
            let path = sanitize(&deferred.path.display().to_string()).into_owned();
            let read = deferred.load(&first.matrix);
            // The screens hold the first read until the whole one takes its place.
            drop(first);
            let reply = match read {
                Ok(mut full) => {
                    let cache = full.pending_cache.take();
                    let report = analysis::run(&full.matrix, &params, None);
                    let full = Arc::new(full);
                    let _ = tx.send(Msg::Replicates(Box::new(Ok((Arc::clone(&full), report)))));
                    crate::core::timing("replicates read", t);
                    if let Some(note) = cache.and_then(|c| c.write(&full.matrix)) {
                        let _ = tx.send(cache_notice(&note));
                    }
                    return;
                }
                Err(e) => anyhow::Error::new(e).context(format!(
                    "{path}, read whole with its replicates once the first screen was up"
                )),
            };
            let _ = tx.send(Msg::Replicates(Box::new(Err(reply))));
        })
        .context("cannot start the replicates' thread")
}

/// Starts the thread that computes the cells' fingerprint, at a low priority, and wakes
/// the loop when it is known.
fn spawn_fingerprint(
    ds: &Arc<Dataset>,
    wake: &Arc<impl Fn() + Send + Sync + 'static>,
) -> Result<Arc<OnceLock<String>>> {
    let fp: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let (ds, out, wake) = (Arc::clone(ds), Arc::clone(&fp), Arc::clone(wake));
    std::thread::Builder::new()
        .name("frameaudit-fingerprint".into())
        .spawn(move || {
            // Needed after the first screen, not for it: the thread gives the cores to what
            // draws it first (on Linux a thread's nice value is its own; a refusal leaves
            // the default).
            #[cfg(target_os = "linux")]
            let _ = rustix::process::setpriority_process(None, 19);
            let t = std::time::Instant::now();
            let _ = out.set(fingerprint(&ds.matrix));
            crate::core::timing("fingerprint", t);
            wake();
        })
        .context("cannot start the fingerprint's thread")?;
    Ok(fp)
}

/// The keymap: the defaults for the taxonomy with the user's keymap file over them. A
/// pathway key that clashes with another key is refused, naming it and the file that made the clash.
fn keymap_for(opts: &TuiOptions, taxonomy: &Taxonomy) -> Result<Keymap> {
    let mut keymap = Keymap::default_for(taxonomy);
    if let Some(path) = &opts.keymap {
        let bytes = crate::core::fsread::read(path, crate::core::fsread::SETTINGS)
            .with_context(|| format!("cannot read {}", path.display()))?;
        keymap.apply_overrides(&bytes, path, taxonomy.pathways.len())?;
    }
    let conflicts = keymap.pathway_conflicts(taxonomy);
    if !conflicts.is_empty() {
        // The file that made the clash: the keymap when the taxonomy's keys clash with no
        // default key.
        let by_keymap = opts.keymap.as_ref().filter(|_| {
            Keymap::default_for(taxonomy)
                .pathway_conflicts(taxonomy)
                .is_empty()
        });
        let (file, mend) = match (by_keymap, &opts.taxonomy) {
            (Some(k), _) => (
                sanitize(&k.display().to_string()).into_owned(),
                "in the keymap, give the pathway or the other action another key, or unbind the other with \"none\"",
            ),
            (None, Some(t)) => (
                sanitize(&t.display().to_string()).into_owned(),
                "give the pathway another key in the taxonomy, or move that key with --keymap",
            ),
            (None, None) => (
                "the bundled taxonomy".to_string(),
                "move that key with --keymap",
            ),
        };
        anyhow::bail!(
            "{file}: {} pathway key(s) clash with other keys ({mend}): {}",
            conflicts.len(),
            conflicts
                .iter()
                .map(|c| sanitize(c).into_owned())
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    Ok(keymap)
}

/// The annotator's audit file in the dataset's audits folder (a review's under
/// `adjudicated/`), the folder made without following a link: one planted in a shared
/// dataset would have the audit written anywhere.
fn own_audit_path(ds: &Dataset, opts: &TuiOptions, annotator: &str) -> Result<PathBuf> {
    let own = default_audit_path(ds, annotator);
    // A review's audit goes beside the annotators' audits, but not among them:
    // audits/adjudicated/NAME.audit.jsonl.
    let path = match (&opts.review, own.parent()) {
        (Some(_), Some(dir)) => dir
            .join("adjudicated")
            .join(own.file_name().unwrap_or_default()),
        _ => own,
    };
    if let Some(dir) = path.parent()
        && let Err(e) = crate::core::fswrite::create_dir_below(&dataset_home(ds), dir)
    {
        let dir = sanitize(&dir.display().to_string()).into_owned();
        if not_writable(&e) {
            anyhow::bail!(
                "cannot make the audits folder {dir}: {e}. {}",
                audit_elsewhere(&path)
            );
        }
        return Err(e).with_context(|| format!("cannot make the audits folder {dir}"));
    }
    Ok(path)
}

/// Whether `e` says the dataset is not the user's to write (a shared, read-only one).
fn not_writable(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

/// What to do when the dataset's audits folder, where the audit at `path` would go, is not
/// the user's to write.
fn audit_elsewhere(path: &std::path::Path) -> String {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    format!(
        "The dataset is not yours to write: keep your audit where you can write, with --audit (frameaudit DATASET --audit ~/{})",
        sanitize(&name)
    )
}

/// Closes a frame store when dropped ([`crate::core::frames::FrameStore::close`]).
struct CloseDecodes(crate::core::frames::FrameStore);

impl Drop for CloseDecodes {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Runs the TUI on a loaded dataset until the user quits.
pub fn run(mut ds: Dataset, opts: TuiOptions) -> Result<()> {
    let pending_cache = ds.pending_cache.take();
    let (tx, rx): (Sender<Msg>, Receiver<Msg>) = channel();
    let wake_tx = tx.clone();
    let mut app = build_app(ds, &opts, move || {
        let _ = wake_tx.send(Msg::Wake);
    })?;
    // One store for the frame loader and the full-size frames (`f`): its decodes are
    // killed on every way out of here, those of `f`'s worker too.
    let store = (app.frames.store)
        .get_or_init(|| crate::core::frames::FrameStore::new(&app.ds))
        .clone();
    let _decodes = CloseDecodes(store.clone());
    let problems: Vec<String> = crate::core::frames::FRAME_CACHE_LIMIT
        .problem()
        .into_iter()
        .chain(crate::core::cache::problems())
        .collect();
    if !problems.is_empty() {
        app.overlays.notice = Some(app::Notice {
            text: crate::core::text::sanitize(&problems.join("; ")).into_owned(),
            error: true,
        });
    }
    if app.frames.images != ImageMode::None || opts.images == ImageMode::Auto {
        let frames_tx = tx.clone();
        app.frames.loader = Some(crate::core::frames::FrameLoader::new(
            store,
            512,
            move || {
                let _ = frames_tx.send(Msg::Wake);
            },
        ));
    }
    let workers = Workers::spawn(&tx)?;
    app.research.worker = true;

    #[cfg(unix)]
    forward_signals(tx.clone())?;
    // From here on the terminal is ours; give it back on every exit path.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        default_hook(info);
    }));
    terminal::enable_raw_mode().context("cannot switch the terminal to raw mode")?;
    let _guard = TerminalGuard;
    let mut stdout = std::io::stdout();
    // Bracketed paste: a paste arrives as one piece of text, never as keys (a newline in it
    // would be Enter, and every letter after it a command).
    execute!(
        stdout,
        terminal::EnterAlternateScreen,
        cursor::Hide,
        crossterm::event::EnableBracketedPaste
    )?;
    if opts.mouse {
        execute!(stdout, EnableClickReports)?;
    }
    let mut term = Terminal::new(CrosstermBackend::new(stdout))?;
    let size = term.size()?;
    app.geometry.term_size = (size.width, size.height);

    draw(&mut term, &mut app)?;
    crate::core::timing_since_start("first screen");
    // The replicates left for later are read now that the first screen is up.
    let replicates = match app.ds.deferred.clone() {
        Some(d) => Some(spawn_replicates(d, Arc::clone(&app.ds), &opts, tx.clone())?),
        None => None,
    };
    // The terminal is asked what it draws after the first screen, which never waits for it;
    // the input thread reads the answers first, handing on keys typed meanwhile.
    let asked = opts.images;
    let probe = matches!(
        asked,
        ImageMode::Auto | ImageMode::Kitty | ImageMode::Sixel | ImageMode::Iterm
    )
    .then(crate::term::query::Probe::start);
    let query = probe.as_ref().map(|p| {
        let sent = crate::term::query::send(p.through, p.env.tmux);
        (p.env.clone(), p.tmux.clone(), p.through, sent)
    });
    // Until the input thread has read the answers (it says so with `Msg::Terminal`).
    let mut asking = query
        .as_ref()
        .map(|_| std::time::Instant::now() + crate::term::query::ANSWER_TIMEOUT);
    let input_tx = tx.clone();
    std::thread::Builder::new()
        .name("frameaudit-input".into())
        .spawn(move || {
            if let Some((env, tmux, through, sent)) = query {
                let choose = |a: &crate::term::detect::Answers| {
                    crate::term::detect::choose(Some(asked), &env, tmux.as_ref(), a)
                };
                // Pictures wait no longer than the answers' time; a late answer is still
                // read here (crossterm would take it for keys), and may change the choice.
                let mut in_time = None;
                let a = crate::term::query::read_answers_for_screens(
                    sent,
                    through,
                    |e| {
                        let _ = input_tx.send(Msg::Input(e));
                    },
                    |a| {
                        let choice = choose(a);
                        let _ = input_tx.send(Msg::Terminal(Box::new(choice.clone())));
                        in_time = Some(choice);
                    },
                );
                let choice = choose(&a);
                if in_time.as_ref() != Some(&choice) {
                    let _ = input_tx.send(Msg::Terminal(Box::new(choice)));
                }
                // crossterm hears of resizes once it reads: one during the query is caught
                // up with here, after it listens (a resize from then on it reports itself).
                let _ = crossterm::event::poll(Duration::ZERO);
                if let Ok((w, h)) = terminal::size() {
                    let _ = input_tx.send(Msg::Input(TermEvent::Resize(w, h)));
                }
            }
            while let Ok(e) = crossterm::event::read() {
                if input_tx.send(Msg::Input(e)).is_err() {
                    break;
                }
            }
        })?;

    // The matrix cache is written while the annotator looks at the first screen, not
    // before it.
    let cache_writer = pending_cache.and_then(|c| {
        let ds = std::sync::Arc::clone(&app.ds);
        let tx = tx.clone();
        std::thread::Builder::new()
            .name("frameaudit-cache".into())
            .spawn(move || {
                if let Some(note) = c.write(&ds.matrix) {
                    let _ = tx.send(cache_notice(&note));
                }
            })
            .ok()
    });
    let mut rejected = None;
    let mut replicates_in = false;
    loop {
        let first = match rx.recv_timeout(Duration::from_millis(1000)) {
            Ok(m) => Some(m),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        };
        // Handle everything that is waiting, then draw once.
        let mut quit = false;
        for msg in first
            .into_iter()
            .chain(std::iter::from_fn(|| rx.try_recv().ok()))
        {
            if let Msg::Terminal(_) = msg {
                asking = None;
            }
            if let Msg::Replicates(reply) = msg {
                replicates_in = true;
                match *reply {
                    Ok((full, report)) => {
                        for e in app.attach_replicates(full, report) {
                            quit |= workers.perform(&mut app, e);
                        }
                    }
                    // Rejected as a start would have been: the screens close, what is
                    // saved stays saved, and the problems are printed once the terminal is
                    // given back.
                    Err(problems) => {
                        rejected = Some(problems);
                        quit = true;
                    }
                }
                continue;
            }
            for e in handle(&mut app, msg) {
                quit |= workers.perform(&mut app, e);
            }
        }
        if quit {
            break;
        }
        app.settle_fingerprint();
        draw(&mut term, &mut app)?;
    }
    // Answers to the terminal's query still on their way would be read by the shell once
    // the screens close, and printed there: screens closed at once (a rejected read, a
    // quick `q`) wait for them, at most as long as the query may take.
    if let Some(until) = asking {
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match rx.recv_timeout(left + Duration::from_millis(100)) {
                Ok(Msg::Terminal(_)) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
    // Leave only once the file holds everything (or the user confirmed quitting without),
    // the last try said on screen while it lasts.
    if app.session.unsaved() > 0 {
        let _ = draw(&mut term, &mut app);
    }
    let saved = app.session.wait_saved(Duration::from_secs(2));
    // A cache half written is never used, but it would cost the next start its speed.
    if let Some(w) = cache_writer {
        let _ = w.join();
    }
    // Writing the whole dataset's cache is finished; a read still going is left behind.
    if let Some(r) = replicates.filter(|_| replicates_in) {
        let _ = r.join();
    }
    match rejected {
        Some(problems) => Err(problems),
        // Changes the file could not take (a full disk, a folder that became a link, an
        // audit another frameaudit opened meanwhile), also on SIGTERM or SIGHUP, which
        // leave without asking: said once the terminal is back, and the exit is not 0.
        None if !saved => Err(anyhow::anyhow!(
            "{} not saved to {}{}",
            app.session.unsaved_said(),
            app.session.path().map_or_else(
                || "the audit file".into(),
                |p| sanitize(&p.display().to_string()).into_owned()
            ),
            app.session
                .last_error()
                .map(|e| format!(": {}", sanitize(&e)))
                .unwrap_or_default()
        )),
        None => Ok(()),
    }
}

/// A message to the app: what it asks done.
fn handle(app: &mut App, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Input(TermEvent::Key(k)) if k.kind == KeyEventKind::Press => app.on_key(k),
        Msg::Input(TermEvent::Mouse(m)) => app.on_mouse(m),
        Msg::Input(TermEvent::Paste(text)) => app.on_paste(&text),
        Msg::Input(TermEvent::Resize(w, h)) => {
            app.geometry.term_size = (w, h);
            app.on_resize(crate::term::query::cell_from_winsize());
            Vec::new()
        }
        Msg::Terminal(choice) => {
            app.set_choice(*choice);
            Vec::new()
        }
        // Handled by the loop itself ([`run`]).
        Msg::Input(_) | Msg::Wake | Msg::Replicates(_) => Vec::new(),
        Msg::Stop => app.stop(),
        Msg::Search(r) => {
            app.on_search_result(r);
            Vec::new()
        }
        Msg::Planned(n) => {
            app.on_planned(n);
            Vec::new()
        }
        Msg::Notice(n) => {
            app.on_notice(n);
            Vec::new()
        }
        Msg::Research(r) => {
            app.on_research(r);
            // A view built asks for its intervals next.
            app.ensure_view()
        }
    }
}

/// The background workers the effects go to, each answering the loop with a message.
struct Workers {
    views: research::ViewWorker,
    searcher: Searcher,
    planner: Planner,
    /// For the answers of the one-off jobs (a full-size frame).
    tx: Sender<Msg>,
}

impl Workers {
    fn spawn(tx: &Sender<Msg>) -> Result<Workers> {
        let views_tx = tx.clone();
        let views = research::ViewWorker::spawn(move |r| {
            let _ = views_tx.send(Msg::Research(r));
        })
        .context("cannot start the researcher views' thread")?;
        let search_tx = tx.clone();
        let searcher = Searcher::spawn(move |r| {
            let _ = search_tx.send(Msg::Search(r));
        })
        .context("cannot start the search thread")?;
        let plan_tx = tx.clone();
        let planner = Planner::spawn(move |n| {
            let _ = plan_tx.send(Msg::Planned(n));
        })
        .context("cannot start the plan thread")?;
        Ok(Workers {
            views,
            searcher,
            planner,
            tx: tx.clone(),
        })
    }

    /// Performs one effect; true when it is quitting.
    fn perform(&self, app: &mut App, e: Effect) -> bool {
        match e {
            Effect::Quit => return true,
            Effect::Save => app.session.save(),
            Effect::Search => self.searcher.request(app.search_request()),
            Effect::Research => {
                if let Some(r) = app.view_request() {
                    self.views.request(r);
                }
            }
            Effect::Plan => {
                for r in app.take_plan_requests() {
                    self.planner.request(r);
                }
            }
            Effect::FullFrame => {
                if let Some(job) = app.take_full_frame() {
                    let tx = self.tx.clone();
                    let spawned = std::thread::Builder::new()
                        .name("frameaudit-full-frame".into())
                        .spawn(move || {
                            let _ = tx.send(Msg::Notice(job.run()));
                        });
                    if let Err(e) = spawned {
                        app.on_notice(Notice {
                            text: format!("cannot start the full-size frame's thread: {e}"),
                            error: true,
                        });
                    }
                }
            }
        }
        false
    }
}

fn draw(term: &mut Terminal<CrosstermBackend<Stdout>>, app: &mut App) -> Result<()> {
    let t = std::time::Instant::now();
    // Synchronized updates: the terminal shows a whole frame or none, never half.
    execute!(term.backend_mut(), BeginSynchronizedUpdate)?;
    view::render(term, app)?;
    if !app.frames.deletions.is_empty() {
        let gone = std::mem::take(&mut app.frames.deletions);
        term.backend_mut().write_all(gone.as_bytes())?;
    }
    execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    crate::core::timing("draw", t);
    Ok(())
}
