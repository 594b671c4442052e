//! `casebook serve` end to end: the real binary on a copy of the bundled content, asked
//! over raw TCP (so that no client tidies the request path): content types, folders,
//! 404, every way out of the output folder, `/api/search`, and the edit → rebuild →
//! reload cycle, with a broken edit's diagnostics and the recovery.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use common::{copy_tree, files_below, repo};

/// How long anything may take: a debug build of the bundled content on a busy machine.
const PATIENCE: Duration = Duration::from_secs(120);

/// A running `casebook serve` on its own copy of the content, killed when dropped (also
/// when a test fails).
struct Server {
    child: Child,
    address: SocketAddr,
    site: tempfile::TempDir,
    /// The URL it printed.
    url: String,
    /// What it printed on stderr (diagnostics), shown when a test fails.
    stderr: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The server's own account, for a test that failed.
        if std::thread::panicking() {
            eprintln!("casebook serve's stderr:\n{}", self.stderr.lock().map(|s| s.clone()).unwrap_or_default());
        }
    }
}

impl Server {
    /// Copies the bundled content into a temporary site and serves it on a free port.
    fn start() -> Server {
        Self::start_with(|_| {}, &[])
    }

    /// The same, with `prepare` adding to the site first, and more arguments.
    fn start_with(prepare: impl FnOnce(&Path), arguments: &[&str]) -> Server {
        Self::start_site(&repo(), prepare, arguments)
    }

    /// Serves a copy of the site whose root is `from`.
    fn start_site(from: &Path, prepare: impl FnOnce(&Path), arguments: &[&str]) -> Server {
        let site = tempfile::tempdir().unwrap();
        copy_tree(&from.join("content"), &site.path().join("content"));
        prepare(site.path());
        let mut child = Command::new(env!("CARGO_BIN_EXE_casebook"))
            .args(["serve", "--root", ".", "--port", "0", "--quiet"])
            .args(arguments)
            .current_dir(site.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut errors = child.stderr.take().unwrap();
        let collected = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = errors.read(&mut buffer) {
                if let Ok(mut text) = collected.lock() {
                    text.push_str(&String::from_utf8_lossy(&buffer[..n]));
                }
            }
        });
        let (lines_tx, lines) = mpsc::channel();
        // Read to the end, so the server never writes into a closed pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines_tx.send(line);
            }
        });
        // Guarded from here on: a timeout below still kills the process.
        let mut server = Server { child, address: "127.0.0.1:0".parse().unwrap(), site, url: String::new(), stderr };
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = lines.recv_timeout(left).expect("casebook serve prints the address it serves");
            if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                let host = url.trim_start_matches("http://").trim_end_matches('/');
                let host = host.split('/').next().unwrap_or_default();
                server.address = host.parse().unwrap_or_else(|_| panic!("an address in {line:?}"));
                server.url = url.to_string();
                break;
            }
        }
        server
    }

    fn root(&self) -> &Path {
        self.site.path()
    }

    fn get(&self, target: &str) -> Response {
        request(self.address, &format!("GET {target} HTTP/1.1"))
    }

    fn status(&self) -> serde_json::Value {
        let response = self.get("/__casebook/status");
        assert_eq!(response.status, 200);
        serde_json::from_slice(&response.body).unwrap()
    }

    /// Polls the status until `done` holds for it.
    fn wait_for_status(&self, what: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let status = self.status();
            if done(&status) {
                return status;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}; last status: {status}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `request_line` as it is, reads the whole response (the connection is closed).
fn request(address: SocketAddr, request_line: &str) -> Response {
    request_for(address, request_line, &address.to_string())
}

/// [`request`], naming `host` in its `Host` header.
fn request_for(address: SocketAddr, request_line: &str, host: &str) -> Response {
    request_with(address, request_line, host, "")
}

/// [`request_for`], with more header lines (each ending in CRLF).
fn request_with(address: SocketAddr, request_line: &str, host: &str, headers: &str) -> Response {
    let mut stream = TcpStream::connect(address).expect("the server accepts connections");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(stream, "{request_line}\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status =
        lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok()).expect("a status line");
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_string(), v.trim().to_string())).collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked")) {
        body = unchunk(&body);
    }
    Response { status, headers, body }
}

fn unchunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else { return out };
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 4 + size..];
    }
}

#[test]
fn files_are_served_with_their_types_folders_give_index_html_and_misses_the_404_page() {
    // Kinds of file the bundled site does not make, from static/.
    let server = Server::start_with(
        |root| {
            std::fs::create_dir_all(root.join("static/extra")).unwrap();
            for name in ["module.wasm", "font.woff2", "picture.png", "data.unknownkind", "lines.jsonl"] {
                std::fs::write(root.join("static/extra").join(name), name.as_bytes()).unwrap();
            }
        },
        &[],
    );
    assert_eq!(server.url, format!("http://{}/", server.address));
    assert_eq!(server.address.ip().to_string(), "127.0.0.1", "loopback unless asked otherwise");
    let public = server.root().join("public");

    let home = server.get("/");
    assert_eq!(home.status, 200);
    assert_eq!(home.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(home.header("cache-control"), Some("no-store"));
    let on_disk = std::fs::read_to_string(public.join("index.html")).unwrap();
    assert!(!on_disk.contains("__casebook"), "the reload script is added when serving, never written");
    // The served page is the file with the reload script in its head, nothing else.
    let tag = r#"<script src="/__casebook/reload.js" data-generation="1" defer></script>"#;
    assert_eq!(home.text().replacen(tag, "", 1), on_disk);
    assert!(home.text().contains(&format!("{tag}</head>")));

    let script = server.get("/__casebook/reload.js");
    assert_eq!((script.status, script.header("content-type")), (200, Some("text/javascript; charset=utf-8")));
    assert!(script.text().contains("EventSource"));

    // One file of each kind the site has.
    let mut seen = std::collections::BTreeMap::new();
    for file in files_below(&public) {
        if let Some(extension) = file.extension().and_then(|e| e.to_str()) {
            seen.entry(extension.to_string()).or_insert(file);
        }
    }
    let expected = [
        ("html", "text/html; charset=utf-8"),
        ("css", "text/css; charset=utf-8"),
        ("js", "text/javascript; charset=utf-8"),
        ("json", "application/json"),
        ("svg", "image/svg+xml"),
        ("xml", "application/xml"),
        ("txt", "text/plain; charset=utf-8"),
        ("wasm", "application/wasm"),
        ("woff2", "font/woff2"),
        ("png", "image/png"),
        ("jsonl", "application/jsonl"),
        // The search page's index files, which the page inflates itself.
        ("gz", "application/gzip"),
        ("unknownkind", "application/octet-stream"),
    ];
    for (extension, content_type) in expected {
        let file = seen.get(extension).unwrap_or_else(|| panic!("the site has no .{extension} file"));
        let url = format!("/{}", file.to_string_lossy());
        let response = server.get(&url);
        assert_eq!(response.status, 200, "{url}");
        assert_eq!(response.header("content-type"), Some(content_type), "{url}");
        if extension != "html" {
            assert_eq!(response.body, std::fs::read(public.join(file)).unwrap(), "{url} is served as it is");
        }
    }

    let folder = server.get("/fractal/");
    assert_eq!(folder.status, 200);
    assert_eq!(folder.text().replacen(tag, "", 1), std::fs::read_to_string(public.join("fractal/index.html")).unwrap());
    let bare = server.get("/fractal?x=1");
    assert_eq!((bare.status, bare.header("location")), (307, Some("/fractal/?x=1")));
    // Never a protocol-relative URL, which would lead to another host.
    assert_eq!(server.get("//fractal").header("location"), Some("/fractal/"));

    let missing = server.get("/no/such/page/");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.text().replacen(tag, "", 1), std::fs::read_to_string(public.join("404.html")).unwrap());
    assert_eq!(server.get("/assets/none.css").status, 404);

    let post = request(server.address, "POST / HTTP/1.1");
    assert_eq!(post.status, 405);

    // The event stream starts with the current status.
    let mut stream = TcpStream::connect(server.address).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(stream, "GET /__casebook/events HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut seen_events = String::new();
    let mut buffer = [0u8; 4096];
    while !seen_events.contains("\"generation\":1") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "the stream ended: {seen_events}");
        seen_events.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
    assert!(seen_events.contains("text/event-stream"), "{seen_events}");
    assert!(seen_events.contains("event: status"), "{seen_events}");

    // The served folder is what `casebook build` makes of the same sources.
    assert_served_as_built(&server);
}

#[test]
fn a_base_url_with_a_path_is_served_under_that_path() {
    let server = Server::start_with(|_| {}, &["--base-url", "/preview/pr-7/"]);
    assert_eq!(server.url, format!("http://{}/preview/pr-7/", server.address));
    let home = server.get("/preview/pr-7/");
    assert_eq!(home.status, 200);
    // A link to a neighbour is relative; the others carry the base path.
    assert!(home.text().contains(r#"href="fractal/""#), "a relative link");
    let system = server.get("/preview/pr-7/fractal/");
    assert_eq!(system.status, 200);
    assert!(system.text().contains(r#"href="/preview/pr-7/assets/style."#), "links carry the base path");
    assert_eq!(server.get("/preview/pr-7").header("location"), Some("/preview/pr-7/"));
    assert_eq!(server.get("/").status, 404);
    assert_eq!(server.get("/fractal/").status, 404);
    assert_eq!(server.get("/preview/pr-70/").status, 404);
    // The server's own URLs stay at the root: pages load the script from there.
    assert_eq!(server.get("/__casebook/reload.js").status, 200);
    assert_eq!(server.get("/api/search?q=MEM-OBJ-raw").status, 200);
}

#[test]
fn no_request_reads_outside_the_output_folder() {
    let server = Server::start();
    let secret = "casebook-test-secret-5f3a";
    std::fs::write(server.root().join("secret.txt"), secret).unwrap();
    std::fs::write(server.root().join("content/secret.txt"), secret).unwrap();
    // A symbolic link inside the output that points out of it, to a file and to a folder.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(server.root().join("secret.txt"), server.root().join("public/leak.txt")).unwrap();
        std::os::unix::fs::symlink(server.root(), server.root().join("public/up")).unwrap();
    }
    let attempts = [
        "/../secret.txt",
        "/../../../../../../etc/passwd",
        "/fractal/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/%2e%2e/etc/passwd",
        "/.%2e/secret.txt",
        "/%2e%2e%2fsecret.txt",
        "/fractal%2f..%2f..%2fsecret.txt",
        "/%2fetc%2fpasswd",
        "/..%5csecret.txt",
        "/..\\secret.txt",
        "/%5c..%5c..%5csecret.txt",
        "//etc/passwd",
        "/etc/passwd",
        "/%00/etc/passwd",
        "/leak.txt",
        "/up/secret.txt",
        "/up/content/secret.txt",
        "/up/",
        "http://127.0.0.1/../secret.txt",
        "/./../secret.txt",
        "*",
    ];
    for target in attempts {
        for method in ["GET", "HEAD"] {
            let response = request(server.address, &format!("{method} {target} HTTP/1.1"));
            assert!(
                [400, 404].contains(&response.status),
                "{method} {target}: {} {}",
                response.status,
                response.text()
            );
            assert!(!response.text().contains(secret), "{method} {target} leaked the file");
            assert!(!response.text().contains("root:x:0:0"), "{method} {target} leaked /etc/passwd");
        }
    }
    // What is inside is still served.
    assert_eq!(server.get("/robots.txt").status, 200);
}

#[test]
fn api_search_answers_from_the_current_index_like_casebook_search() {
    let server = Server::start();
    let response = server.get("/api/search?q=MEM-OBJ-raw");
    assert_eq!((response.status, response.header("content-type")), (200, Some("application/json")));
    let results: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(results["schema"], "casebook.search/1");
    assert_eq!(results["query"], "MEM-OBJ-raw");
    assert_eq!(results["results"][0]["id"], "MEM-OBJ-raw", "{results:#}");
    assert_eq!(results["results"][0]["type"], "record");

    // The same JSON as the command line, for the same query and filters.
    let cli = Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(["search", "--json", "--index", "public", "--kind", "OBJ", "--limit", "3", "memory"])
        .current_dir(server.root())
        .output()
        .unwrap();
    assert!(cli.status.success(), "{}", String::from_utf8_lossy(&cli.stderr));
    let from_cli: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    let from_server: serde_json::Value =
        serde_json::from_slice(&server.get("/api/search?q=memory&kind=OBJ&limit=3").body).unwrap();
    assert_eq!(from_server, from_cli);

    let filtered: serde_json::Value =
        serde_json::from_slice(&server.get("/api/search?q=memory&system=fractal&type=record&limit=50").body).unwrap();
    let hits = filtered["results"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h["system"] == "fractal" && h["type"] == "record"), "{filtered:#}");

    assert_eq!(server.get("/api/search?q=%22unclosed").status, 400);
    // Queries whose parsing would take exponential time or the stack: refused at once, and
    // the server goes on answering.
    for levels in [30, 5_000] {
        let query = format!("{}memory{}", "%28".repeat(levels), "%29".repeat(levels));
        let started = std::time::Instant::now();
        let refused = server.get(&format!("/api/search?q={query}"));
        let took = started.elapsed();
        assert_eq!(refused.status, 400, "{levels} levels");
        assert!(refused.text().contains("a query may"), "{}", refused.text());
        assert!(took < std::time::Duration::from_secs(2), "{levels} levels took {took:?}");
    }
    assert_eq!(server.get("/api/search?q=MEM-OBJ-raw").status, 200);
    assert_eq!(server.get("/api/search?q=x&type=page").status, 400);
    assert_eq!(server.get("/api/search?q=x&limit=lots").status, 400);
}

/// Waits until the page at `url` contains `text`.
fn wait_for_page(server: &Server, url: &str, text: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let page = server.get(url);
        if page.status == 200 && page.text().contains(text) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {text:?} on {url}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Polls `/api/search?q=QUERY` (QUERY already URL-encoded) until it finds something: the
/// search index is made last, so the rebuild that made it is done.
fn wait_for_search(server: &Server, query: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let hits: serde_json::Value =
            serde_json::from_slice(&server.get(&format!("/api/search?q={query}")).body).unwrap();
        if hits["total"].as_u64().is_some_and(|n| n >= 1) {
            return;
        }
        assert!(Instant::now() < deadline, "the search index never found {query}: {hits:#}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Asserts that the served folder is what `casebook build` makes of the same sources.
fn assert_served_as_built(server: &Server) {
    let public = server.root().join("public");
    let built = server.root().join("built");
    let output = Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(["build", "--quiet", "--root", ".", "--output", "built"])
        .current_dir(server.root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let files = files_below(&public);
    let built_files = files_below(&built);
    let only_served: Vec<_> = files.iter().filter(|f| !built_files.contains(f)).collect();
    let only_built: Vec<_> = built_files.iter().filter(|f| !files.contains(f)).collect();
    assert!(
        only_served.is_empty() && only_built.is_empty(),
        "served only: {only_served:?}; built only: {only_built:?}"
    );
    for file in files {
        assert!(
            std::fs::read(public.join(&file)).unwrap() == std::fs::read(built.join(&file)).unwrap(),
            "{} differs",
            file.display()
        );
    }
}

#[test]
fn an_edit_rebuilds_a_broken_edit_shows_its_diagnostics_and_a_fix_recovers() {
    let server = Server::start();
    let report: PathBuf = server.root().join("content/exia-seed/c7497ac/memory.md");
    let original = std::fs::read_to_string(&report).unwrap();
    let sentence = "Memory-specific lineage: MEM-OBJ-raw is the raw source";
    assert!(original.contains(sentence));
    let line = original.lines().position(|l| l.contains(sentence)).unwrap() + 1;
    let page = "/exia-seed/c7497ac/memory/";
    assert_eq!(server.status()["generation"], 1);

    let edited = original.replace(sentence, "Memory-specific lineage, freshly edited: MEM-OBJ-raw is the raw source");
    std::fs::write(&report, &edited).unwrap();
    wait_for_page(&server, page, "freshly edited");
    // The search index follows the pages (a rebuild announces the edited run's pages
    // first, then the rest: one or two generations).
    wait_for_search(&server, "%22freshly+edited%22");
    let status = server.status();
    assert_eq!(status["ok"], true);
    let good = status["generation"].as_u64().unwrap();
    assert!(good >= 2, "{status:#}");

    std::fs::write(&report, edited.replace("edited: MEM-OBJ-raw is", "edited: MEM-OBJ-rw is")).unwrap();
    let status = server.wait_for_status("the broken build", |s| s["ok"] == false);
    assert_eq!(status["generation"], good, "a failed build does not replace the output");
    let d = &status["diagnostics"][0];
    assert_eq!(d["file"], "content/exia-seed/c7497ac/memory.md", "{status:#}");
    assert_eq!(d["line"], line, "{status:#}");
    assert_eq!(d["severity"], "error");
    assert!(d["message"].as_str().unwrap().contains("unknown record MEM-OBJ-rw"), "{status:#}");
    assert!(
        d["text"].as_str().unwrap().starts_with(&format!("content/exia-seed/c7497ac/memory.md:{line}:")),
        "{status:#}"
    );
    // The last good build is still served.
    assert!(server.get(page).text().contains("freshly edited"));

    std::fs::write(&report, edited.replace("freshly edited", "edited twice")).unwrap();
    let status = server.wait_for_status("the fixed build", |s| s["ok"] == true);
    assert!(status["generation"].as_u64().unwrap() > good, "{status:#}");
    assert_eq!(status["diagnostics"].as_array().map(Vec::len), Some(0));
    wait_for_page(&server, page, "edited twice");
}

#[test]
fn a_folder_created_while_serving_is_watched_too() {
    let server = Server::start();
    assert!(!server.root().join("static").exists());
    std::fs::create_dir(server.root().join("static")).unwrap();
    std::fs::write(server.root().join("static/hello.txt"), "first").unwrap();
    let deadline = Instant::now() + PATIENCE;
    while server.get("/hello.txt").text() != "first" {
        assert!(Instant::now() < deadline, "static/hello.txt never appeared");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Only a watch on the new folder sees this one.
    std::fs::write(server.root().join("static/hello.txt"), "second").unwrap();
    while server.get("/hello.txt").text() != "second" {
        assert!(Instant::now() < deadline, "the change to static/hello.txt was not seen");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_site_that_is_broken_from_the_start_is_served_with_its_diagnostics() {
    let server = Server::start_site(&repo().join("tests/diagnostics/references"), |_| {}, &[]);
    let status = server.status();
    assert_eq!((status["ok"].as_bool(), status["generation"].as_u64()), (Some(false), Some(0)), "{status:#}");
    let diagnostics = status["diagnostics"].as_array().unwrap();
    assert!(!diagnostics.is_empty());
    assert!(
        diagnostics
            .iter()
            .all(|d| d["file"].as_str().is_some_and(|f| f.starts_with("content/")) && d["line"].as_u64().is_some()),
        "{status:#}"
    );
    // No output yet: a page of the server's own, with the script that shows the overlay.
    let home = server.get("/");
    assert_eq!(home.status, 404);
    assert!(home.text().contains("/__casebook/reload.js"), "{}", home.text());
}

#[test]
fn a_port_in_use_is_an_error_before_any_build() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let site = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("content"), &site.path().join("content"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(["serve", "--root", ".", "--port", &port])
        .current_dir(site.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Should it serve after all, it is killed rather than left running.
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("casebook serve did not stop on a port in use");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("cannot listen on 127.0.0.1:{port}")), "{err}");
    assert!(!site.path().join("public").exists(), "nothing was built");
}

#[test]
fn a_save_during_a_rebuild_is_built_at_once_and_nothing_is_lost() {
    // Twenty copies of the fractal analysis: the site-wide part of a rebuild (listings,
    // manifest, search indexes) takes long enough for a save to come in the middle of it.
    let server = Server::start_with(
        |root| {
            for n in 0..20 {
                copy_tree(&root.join("content/fractal"), &root.join(format!("content/fractal-copy-{n}")));
            }
        },
        &[],
    );
    let report: PathBuf = server.root().join("content/exia-seed/c7497ac/memory.md");
    let original = std::fs::read_to_string(&report).unwrap();
    let sentence = "Memory-specific lineage: MEM-OBJ-raw is the raw source";
    let page = "/exia-seed/c7497ac/memory/";
    let save = |n: u32| {
        std::fs::write(
            &report,
            original.replace(sentence, &format!("Memory-specific lineage, save number {n}: MEM-OBJ-raw is")),
        )
        .unwrap()
    };
    // A second save as soon as the first one's page is written, while the rest of that
    // rebuild runs (it stops, and the next rebuild starts at once); then a few more.
    save(1);
    wait_for_page(&server, page, "save number 1");
    save(2);
    wait_for_page(&server, page, "save number 2");
    for n in 3..6 {
        std::thread::sleep(Duration::from_millis(20 * u64::from(n)));
        save(n);
    }
    wait_for_page(&server, page, "save number 5");
    // Once the search index finds the last save, the rebuild is done.
    wait_for_search(&server, "%22save+number+5%22");
    assert_served_as_built(&server);
}

/// DNS rebinding: a page of another site can point its own name at 127.0.0.1, but the
/// browser then sends that name as `Host`, which the server refuses; `localhost`, IP
/// addresses and names given with `--allowed-host` are answered.
#[test]
fn only_localhost_ip_addresses_and_allowed_names_are_answered() {
    let server = Server::start_with(|_| {}, &["--allowed-host", "Preview.Test"]);
    let port = server.address.port();
    for host in ["evil.example", &format!("evil.example:{port}"), "127.0.0.1.evil.example", "localhost.evil.example"] {
        let refused = request_for(server.address, "GET / HTTP/1.1", host);
        assert_eq!(refused.status, 403, "{host}");
        assert!(refused.text().contains("--allowed-host"), "{}", refused.text());
        let status = request_for(server.address, "GET /__casebook/status HTTP/1.1", host);
        assert_eq!(status.status, 403, "the server's own routes too: {host}");
    }
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "app.localhost".into(),
        "preview.test".into(),
    ] {
        assert_eq!(request_for(server.address, "GET / HTTP/1.1", &host).status, 200, "{host}");
    }
}

/// A page of another origin open in the browser cannot use the server's own routes (the
/// event stream, the status, the search API); the server's own pages can, and anyone may
/// load the site's pages.
#[test]
fn the_server_s_own_routes_refuse_another_origin() {
    let server = Server::start();
    let host = server.address.to_string();
    let own = format!("Origin: http://{host}\r\n");
    for target in ["/__casebook/status", "/api/search?q=memory", "/__casebook/reload.js"] {
        for origin in ["http://evil.example", "null", "http://localhost:1", "https://evil.example:443"] {
            let refused = request_with(
                server.address,
                &format!("GET {target} HTTP/1.1"),
                &host,
                &format!("Origin: {origin}\r\n"),
            );
            assert_eq!(refused.status, 403, "{target} from {origin}");
            assert!(refused.text().contains("another origin"), "{}", refused.text());
        }
        assert_eq!(
            request_with(server.address, &format!("GET {target} HTTP/1.1"), &host, &own).status,
            200,
            "{target}"
        );
        assert_eq!(request_for(server.address, &format!("GET {target} HTTP/1.1"), &host).status, 200, "{target}");
    }
    // A page elsewhere that loads the search as an image sends no Origin, but its browser
    // says where the request came from.
    for site in ["cross-site", "same-site"] {
        let refused = request_with(
            server.address,
            "GET /api/search?q=memory HTTP/1.1",
            &host,
            &format!("Sec-Fetch-Site: {site}\r\n"),
        );
        assert_eq!(refused.status, 403, "{site}");
    }
    for own in ["same-origin", "none"] {
        let answered = request_with(
            server.address,
            "GET /api/search?q=memory HTTP/1.1",
            &host,
            &format!("Sec-Fetch-Site: {own}\r\n"),
        );
        assert_eq!(answered.status, 200, "{own}");
    }
    let page = request_with(server.address, "GET / HTTP/1.1", &host, "Sec-Fetch-Site: cross-site\r\n");
    assert_eq!(page.status, 200, "a link from elsewhere opens a page");
    let page = request_with(server.address, "GET / HTTP/1.1", &host, "Origin: http://evil.example\r\n");
    assert_eq!(page.status, 200, "pages are what gets published: no origin is refused them");
}

/// `serve --verify`: each build reads the quotes against the source's repository, and the
/// record page says what it found.
#[test]
fn a_verifying_server_shows_each_quote_s_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("lab");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/a.py"), "x = 1\ny = 2\n").unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "one"]);
    let commit = git(&["rev-parse", "HEAD"]);
    let run = dir.path().join("site/content/lab/r1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(dir.path().join("site/content/lab/system.yaml"), "name: Lab\n").unwrap();
    std::fs::write(
        run.join("run.yaml"),
        format!(
            "revision: {commit}\nsources:\n  - id: SRC-1\n    title: Lab\n    repository: https://github.com/o/lab\n"
        ),
    )
    .unwrap();
    std::fs::write(run.join("r.md"), "# OBJ-01 A\n\n```python\ny = 2\n```\n\n--- src/a.py:2\n").unwrap();
    let source = format!("SRC-1={}", repo.display());
    let server = Server::start_site(&dir.path().join("site"), |_| {}, &["--verify", "--source", &source]);
    let page = server.get("/lab/r1/records/OBJ-01.html").text();
    assert!(page.contains(&format!("verified at {}, line 2", &commit[..7])), "{page}");
}

/// Many readers while the author saves: every request answered, and every page whole and
/// as some build made it, never a mix of two or a file half written. Bounded in clients,
/// time and saves, and stops by itself. `CASEBOOK_LOAD_CLIENTS` and
/// `CASEBOOK_LOAD_SECONDS` make it larger; docs/performance.md has the figures of a run
/// of 200 clients for 20 s (p50 and p99 are printed).
#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn many_readers_during_saves_get_whole_pages_of_one_build_each() {
    let number = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let clients = number("CASEBOOK_LOAD_CLIENTS", 40);
    let seconds = number("CASEBOOK_LOAD_SECONDS", 5);
    let server = Server::start();
    let report: PathBuf = server.root().join("content/exia-seed/c7497ac/memory.md");
    let original = std::fs::read_to_string(&report).unwrap();
    let sentence = "Memory-specific lineage: MEM-OBJ-raw is the raw source";
    assert!(original.contains(sentence));
    let targets = [
        "/exia-seed/c7497ac/memory/",
        "/exia-seed/c7497ac/records/MEM-OBJ-raw.html",
        "/",
        "/fractal/6a226e7/records/EPI-CLM-context-rot.html",
        "/api/search?q=memory",
    ];
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let address = server.address;
    // The author saves twice a second: each save's sentence names its number.
    let saver = std::thread::spawn({
        let report = report.clone();
        move || {
            let mut saves = 0u32;
            while Instant::now() < deadline && saves < 1000 {
                saves += 1;
                let saved = original
                    .replace(sentence, &format!("Memory-specific lineage, save number {saves}: MEM-OBJ-raw is"));
                std::fs::write(&report, saved).unwrap();
                std::thread::sleep(Duration::from_millis(500));
            }
            saves
        }
    });
    let readers: Vec<_> = (0..clients)
        .map(|client| {
            std::thread::spawn(move || {
                let mut answers: Vec<(usize, Duration, Response)> = Vec::new();
                let mut at = client as usize;
                while Instant::now() < deadline {
                    let target = at % targets.len();
                    at += 1;
                    let started = Instant::now();
                    let response = request(address, &format!("GET {} HTTP/1.1", targets[target]));
                    answers.push((target, started.elapsed(), response));
                }
                answers
            })
        })
        .collect();
    let answers: Vec<(usize, Duration, Response)> = readers.into_iter().flat_map(|r| r.join().unwrap()).collect();
    let saves = saver.join().unwrap();

    // Each page as some build made it: of the bodies served for one page and one save,
    // one alone (the reload script's generation number aside), and each whole.
    let generation = regex::Regex::new(r#" data-generation="[0-9]+""#).unwrap();
    let save = regex::Regex::new(r"save number ([0-9]+)").unwrap();
    let mut bodies: std::collections::BTreeMap<(usize, Option<String>), std::collections::BTreeSet<String>> =
        Default::default();
    for (target, _, response) in &answers {
        assert_eq!(response.status, 200, "{}: {}", targets[*target], response.text());
        let text = response.text();
        if targets[*target].starts_with("/api/") {
            serde_json::from_str::<serde_json::Value>(&text).expect("a whole JSON answer");
            continue;
        }
        assert!(
            text.trim_end().ends_with("</html>"),
            "{} is cut short: {}",
            targets[*target],
            &text[text.len().saturating_sub(200)..]
        );
        let version = save.captures(&text).map(|c| c[1].to_string());
        bodies.entry((*target, version)).or_default().insert(generation.replace_all(&text, "").into_owned());
    }
    for ((target, version), texts) in &bodies {
        assert_eq!(texts.len(), 1, "{} at save {version:?} was served in {} forms", targets[*target], texts.len());
    }
    let mut latencies: Vec<Duration> = answers.iter().map(|(_, latency, _)| *latency).collect();
    latencies.sort();
    let percentile = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    eprintln!(
        "load: {clients} clients for {seconds} s, {saves} saves: {} requests, none failed; p50 {:?}, p99 {:?}, max {:?}",
        latencies.len(),
        percentile(50),
        percentile(99),
        latencies.last().unwrap()
    );
    assert!(latencies.len() as u64 >= clients, "too few requests were made to say anything");
    // Saves were seen as they came: the edited page was served at more than one save.
    let versions = bodies.keys().filter(|(target, _)| *target == 0).count();
    assert!(versions >= 2, "the edited page was served at {versions} saves only");
    // And once the last save is built, the output is what a clean build makes.
    wait_for_page(&server, targets[0], &format!("save number {saves}"));
    wait_for_search(&server, &format!("%22save+number+{saves}%22"));
    assert_served_as_built(&server);
}

/// A client that opens connections and trickles its headers (slowloris) holds none past
/// the header deadline, and many such clients do not stop the server answering others.
#[test]
fn a_client_that_trickles_its_headers_is_dropped_and_others_are_answered() {
    use std::io::{Read, Write};
    let server = Server::start();
    let mut slow: Vec<std::net::TcpStream> = (0..300)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(server.address).unwrap();
            stream.write_all(b"GET / HTTP/1.1\r\nHost: 127").unwrap();
            stream
        })
        .collect();
    // More connections than the server holds at once: the rest wait in the backlog, and
    // are answered once the deadline frees their places.
    let started = Instant::now();
    let answered = server.get("/");
    assert_eq!(answered.status, 200);
    assert!(started.elapsed() < Duration::from_secs(30), "answered after {:?}", started.elapsed());
    let first = &mut slow[0];
    first.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut rest = Vec::new();
    let waited = Instant::now();
    let read = first.read_to_end(&mut rest);
    let timed_out =
        read.as_ref().is_err_and(|e| matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock));
    assert!(!timed_out, "the server closed the stalled connection ({:?} waited)", waited.elapsed());
    assert!(rest.is_empty() || String::from_utf8_lossy(&rest).contains("408"), "no page for half a request");
}
