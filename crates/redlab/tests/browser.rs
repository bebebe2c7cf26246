//! The analyzer's HTML page in a real browser: Chromium, driven through WebDriver
//! (chromedriver), loads the page `redlab analyze --html` wrote, and the test hovers
//! banks and warp strips and clicks a source line, asserting what the page then shows.
//! Where no chromedriver is installed the test says so and passes, unless
//! `REDLAB_REQUIRE_BROWSER=1` (set by CI, which installs Debian's chromium and
//! chromium-driver) makes that a failure.

mod common;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{listening_port, redlab};
use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value as Json};

/// chromedriver, stopped when the test ends however it ends.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// chromedriver from `REDLAB_CHROMEDRIVER` or the PATH; `None` (test skipped) unless
/// CI requires the browser.
fn chromedriver() -> Option<PathBuf> {
    let found = std::env::var_os("REDLAB_CHROMEDRIVER")
        .map(PathBuf::from)
        .or_else(|| find_on_path("chromedriver"));
    if found.is_none() {
        assert!(
            std::env::var("REDLAB_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "REDLAB_REQUIRE_BROWSER=1 but no chromedriver on the PATH"
        );
        eprintln!("browser test skipped: no chromedriver (Debian: chromium chromium-driver)");
    }
    found
}

fn start_driver(binary: &Path) -> (Driver, u16) {
    let port = listening_port();
    let child = Command::new(binary)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let driver = Driver(child);
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "chromedriver did not listen on port {port} within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (driver, port)
}

async fn connect(port: u16, profile: &Path) -> Client {
    let mut args = vec![
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ];
    let mut options = json!({});
    if let Some(binary) = std::env::var_os("REDLAB_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| find_on_path("chromium"))
    {
        options["binary"] = json!(binary.to_string_lossy());
    }
    // Each session its own profile, so parallel runs do not share one.
    let profile_arg = format!("--user-data-dir={}", profile.display());
    args.push(&profile_arg);
    options["args"] = json!(args);
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), options);
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a WebDriver session with Chromium")
}

/// Scrolls `e` to the middle of the window, as a user would before pointing at it.
async fn scroll_to_centre(c: &Client, e: &Element) {
    c.execute(
        "arguments[0].scrollIntoView({block: 'center', inline: 'nearest'})",
        vec![serde_json::to_value(e).expect("element reference")],
    )
    .await
    .expect("scrolled");
}

/// Scrolls `e` to the middle of the window and moves the mouse to (dx, dy) from its
/// centre, as a user's hover.
async fn hover(c: &Client, e: &Element, dx: f64, dy: f64) {
    scroll_to_centre(c, e).await;
    let moves = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element: e.clone(),
        duration: None,
        x: dx,
        y: dy,
    });
    c.perform_actions(moves).await.expect("mouse moved");
}

async fn info(c: &Client) -> String {
    c.find(Locator::Id("info"))
        .await
        .expect("the info bar")
        .text()
        .await
        .expect("its text")
}

fn page(dir: &Path, name: &str, targets: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args = vec!["analyze"];
    args.extend_from_slice(targets);
    args.extend_from_slice(&["--global", "256", "--local", "64", "--html"]);
    args.push(out.to_str().expect("utf-8 path"));
    let o = redlab(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

async fn single_page(c: &Client, path: &Path) {
    c.goto(&format!("file://{}", path.display()))
        .await
        .expect("page loads");
    // Hovering bank 0 of each drawn access: reduce1's strided index (2·s·lane) puts lanes
    // 0 and 16 on bank 0 at the first step, two words, one conflict.
    let banks = c
        .find_all(Locator::Css("svg.bank rect[data-bank='0']"))
        .await
        .expect("bank columns");
    assert!(!banks.is_empty(), "the script drew the bank maps");
    let mut told = Vec::new();
    for bank in &banks {
        hover(c, bank, 0.0, 0.0).await;
        told.push(info(c).await);
    }
    // (Line numbers are the assembled source's, which moves with the shared headers.)
    assert!(
        told.iter().any(|t| {
            t.starts_with("bank 0: lanes 0, 16; 2 words, 1 conflict (sdata line ")
                && t.ends_with(", warp 0, load)")
        }),
        "{told:#?}"
    );
    assert!(told.iter().all(|t| t.starts_with("bank 0: ")), "{told:#?}");

    // Hovering the first strip's top-left cell: step 0, lane 0, every lane active.
    let strip = c
        .find(Locator::Css("svg.warp"))
        .await
        .expect("a warp strip");
    let (_, _, w, h) = strip.rectangle().await.expect("its box");
    hover(c, &strip, -w / 2.0 + 1.0, -h / 2.0 + 9.0).await;
    let text = info(c).await;
    let lanes = format!("): lanes {}", "a".repeat(32));
    assert!(
        text.starts_with("warp 0, step 0 (line ") && text.contains(&lanes),
        "{text}"
    );
    assert!(
        text.contains(" · lane 0 active; over the run: active "),
        "{text}"
    );
    // A red mark: the step where the warp's lanes went both ways.
    let marks = c
        .find_all(Locator::Css("svg.warp rect[fill='#d33']"))
        .await
        .expect("divergence marks");
    assert!(!marks.is_empty(), "reduce1 diverges");
    hover(c, &marks[0], 0.0, 0.0).await;
    let text = info(c).await;
    assert!(
        text.contains("(divergent)") && text.contains('T') && text.contains('N'),
        "{text}"
    );

    // Clicking a source line opens its counters.
    let line = c
        .find(Locator::Css(".lines details.bad"))
        .await
        .expect("a line with divergence or conflicts");
    let table = line.find(Locator::Css("table")).await.expect("its table");
    assert!(!table.is_displayed().await.expect("visibility"), "closed");
    let summary = line.find(Locator::Css("summary")).await.expect("summary");
    scroll_to_centre(c, &summary).await;
    summary.click().await.expect("clicked");
    assert!(table.is_displayed().await.expect("visibility"), "opened");
    let counters = table.text().await.expect("counters");
    assert!(counters.contains("divergent"), "{counters}");
}

async fn compare_page(c: &Client, path: &Path) {
    c.goto(&format!("file://{}", path.display()))
        .await
        .expect("page loads");
    let drawn: Json = c
        .execute(
            "return [...document.querySelectorAll('.cols')].map(row => [...row.children].map(col => col.querySelectorAll('svg').length))",
            vec![],
        )
        .await
        .expect("counted");
    // Each row of views holds one column per version, and both versions drew their strips.
    let rows = drawn.as_array().expect("rows");
    assert!(rows.len() >= 3, "{drawn}");
    let drew = |version: usize| {
        rows.iter()
            .map(|r| r[version].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    assert!(drew(0) > 0 && drew(1) > 0, "{drawn}");
    // reduce2 (sequential addressing) has no conflicted bank: every hover says so.
    let columns = c
        .find_all(Locator::Css(
            ".cols > div:nth-child(2) svg.bank rect[data-bank]",
        ))
        .await
        .expect("reduce2's banks");
    assert!(!columns.is_empty());
    hover(c, &columns[3], 0.0, 0.0).await;
    let text = info(c).await;
    assert!(
        text.starts_with("bank 3: lanes 3") && text.contains("1 word, 0 conflicts"),
        "{text}"
    );
}

#[test]
fn the_page_answers_hovers_and_clicks_in_a_browser() {
    let Some(binary) = chromedriver() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let single = page(dir.path(), "reduce1.html", &["reduce1"]);
    let compare = page(dir.path(), "compare.html", &["reduce1", "reduce2"]);
    let (_driver, port) = start_driver(&binary);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let work = async {
            let c = connect(port, &dir.path().join("profile")).await;
            single_page(&c, &single).await;
            compare_page(&c, &compare).await;
            c.close().await.expect("session closed");
        };
        tokio::time::timeout(Duration::from_secs(180), work)
            .await
            .expect("the browser test finished within 3 minutes");
    });
}
