//! A request to the dev server, as raw bytes through hyper's HTTP/1 parser and the
//! server's routes (hosts, origins, the output's files, the reload script, the status,
//! `/api/search`), over an in-memory connection: any bytes get an answer or a closed
//! connection, never a panic or a hang, and no answer holds a byte of a file outside the
//! output folder (the site's sources and a secret beside them).
#![no_main]

mod common;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use casebook::pipeline::{self, BuildOptions};
use casebook::search::Searcher;
use casebook::serve::{http, Served};
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Written beside the output folder and into the sources: no answer may contain it.
const SECRET: &str = "casebook-fuzz-secret-4f1c";
/// The live-reload stream's path: its answer never ends.
const EVENTS: &[u8] = b"/__casebook/events";

struct Server {
    _site: common::Site,
    router: axum::Router,
    runtime: tokio::runtime::Runtime,
}

static SERVER: LazyLock<Server> = LazyLock::new(|| {
    common::one_worker();
    let site = common::site();
    let mut options = BuildOptions::new(&site.root);
    options.output = site.root.join("public");
    options.search_index = true;
    let outcome = pipeline::build(&options).expect("the small site builds");
    assert!(outcome.written, "the small site builds: {:?}", outcome.diagnostics);
    std::fs::write(site.root.join("secret.txt"), SECRET).unwrap();
    std::fs::write(site.root.join("content/fuzz/run-1/notes.txt"), SECRET).unwrap();
    let searcher = Searcher::load(&options.output).ok();
    let router = http::router(Arc::new(Served::over_output(options.output.clone(), searcher)));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    Server { _site: site, router, runtime }
});

/// Sends `request` on a fresh connection and reads until the server closes it.
async fn exchange(router: axum::Router, request: &[u8]) -> (Vec<u8>, bool) {
    let (mut client, server) = tokio::io::duplex(1 << 16);
    let service = hyper_util::service::TowerToHyperService::new(router);
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(server), service);
    let talk = async {
        // The server may answer and close before reading everything: a failed write is
        // part of the exchange.
        let _ = client.write_all(request).await;
        let _ = client.shutdown().await;
        let mut answer = Vec::new();
        let _ = client.read_to_end(&mut answer).await;
        answer
    };
    let exchanged = async { tokio::join!(connection, talk).1 };
    match tokio::time::timeout(Duration::from_secs(3), exchanged).await {
        Ok(answer) => (answer, true),
        Err(_) => (Vec::new(), false),
    }
}

fn holds(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The request with every `%XX` decoded (and `+` as a space), as a server may read it.
fn percent_decode(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
        match (data[i], data.get(i + 1).copied().and_then(hex), data.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push(high << 4 | low);
                i += 3;
            }
            (b'+', ..) => {
                out.push(b' ');
                i += 1;
            }
            (byte, ..) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let server = &*SERVER;
    let (answer, finished) = server.runtime.block_on(exchange(server.router.clone(), data));
    // The live-reload stream stays open by design; nothing else may.
    let streams = data.windows(EVENTS.len()).any(|w| w == EVENTS);
    assert!(finished || streams, "no answer within 3 s to {:?}", String::from_utf8_lossy(data));
    // A request that holds the secret itself (`/api/search?q=…` echoes its query, a
    // page names the path it could not find) proves nothing either way.
    // (Raw too: a redirect repeats the query as it came, `%ca` and all.)
    let asked = percent_decode(data);
    if !holds(&asked, SECRET.as_bytes()) && !holds(data, SECRET.as_bytes()) {
        assert!(
            !holds(&answer, SECRET.as_bytes()),
            "a file outside the output was served for {:?}",
            String::from_utf8_lossy(data)
        );
    }
});
