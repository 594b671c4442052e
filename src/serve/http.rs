//! The HTTP side of the dev server (axum): the output folder's files, the reload script
//! and its event stream, the build status, and `/api/search`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::{Stream, StreamExt};

use super::files::{self, Found};
use super::status::BuildStatus;
use super::Served;
use crate::search::{Request, SearchError};

/// The client script: reloads after a good build, shows the overlay after a bad one.
const RELOAD_JS: &str = include_str!("reload.js");

/// The most results `/api/search` returns at once (the index is in memory, but a request
/// should not make the server allocate without bound).
const MAX_LIMIT: usize = 1000;

/// The most connections the dev server holds at once; more wait in the backlog until one
/// closes, so a page that opens thousands cannot exhaust the process's files.
const MAX_CONNECTIONS: usize = 256;
/// How long a connection may take to send a request's headers (also between requests on
/// a kept-alive connection): a client that trickles them is dropped.
const HEADER_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// Answers `listener`'s connections with `router`, at most [`MAX_CONNECTIONS`] at once,
/// each dropped when its headers take longer than [`HEADER_DEADLINE`]. Live-reload
/// streams stay open as long as the browser keeps them.
pub async fn serve_connections(listener: tokio::net::TcpListener, router: Router) -> std::io::Result<()> {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let slot = Arc::clone(&slots).acquire_owned().await.expect("the semaphore is never closed");
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // A connection reset before it was accepted, or no file descriptor left for
            // a moment: the server goes on.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(HEADER_DEADLINE);
            // A connection that ends badly (a reset, a deadline missed) concerns only it.
            let _ = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service).await;
        });
    }
}

/// The routes. Everything that is not the server's own goes to the output folder.
pub fn router(served: Arc<Served>) -> Router {
    Router::new()
        .route(files::RELOAD_SCRIPT, get(reload_script))
        .route("/__casebook/events", get(events))
        .route("/__casebook/status", get(status))
        .route("/api/search", get(search))
        .fallback(site_file)
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&served), only_known_hosts))
        .with_state(served)
}

/// Refuses a request whose `Host` is a name other than `localhost` (or one given with
/// `--allowed-host`): a page of another site, open in the same browser, can point its own
/// name at 127.0.0.1 (DNS rebinding) and read the unpublished site through it, but it
/// cannot make the browser send `Host: localhost`.
async fn only_known_hosts(
    State(served): State<Arc<Served>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok());
    if host.is_some_and(|host| !host_allowed(host, &served.allowed_hosts)) {
        return text(
            StatusCode::FORBIDDEN,
            "casebook serve answers to localhost and IP addresses only; start it with --allowed-host NAME to answer to NAME\n",
        );
    }
    let path = request.uri().path();
    let own = path.starts_with("/__casebook/") || path.starts_with("/api/");
    let origin = request.headers().get(header::ORIGIN).map(|o| o.to_str().unwrap_or("null"));
    let fetched_from = request.headers().get("sec-fetch-site").map(|s| s.to_str().unwrap_or("cross-site"));
    if own && (origin.is_some_and(|origin| !same_origin(origin, host)) || fetched_from.is_some_and(|s| !own_fetch(s))) {
        return text(
            StatusCode::FORBIDDEN,
            "casebook serve's event stream, status and search answer only to its own pages, not to another origin\n",
        );
    }
    next.run(request).await
}

/// True when the `Origin` a browser sent names the host the request was sent to: a page
/// the server served. A page of any other origin (or a sandboxed one, `null`) is refused
/// the server's own routes, though no browser would let it read their answers.
fn same_origin(origin: &str, host: Option<&str>) -> bool {
    let authority = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
    matches!((authority, host), (Some(authority), Some(host)) if authority.eq_ignore_ascii_case(host))
}

/// True when a browser's `Sec-Fetch-Site` says the request came from one of the server's
/// own pages (`same-origin`) or from the reader's own hand (`none`: typed, bookmarked). A
/// page elsewhere that loads `/api/search?q=…` as an image sends no `Origin`, but says
/// `cross-site` (or `same-site`, from another port of localhost) here. Clients that are
/// not browsers send neither header, and cannot be made to send a request by a page.
fn own_fetch(sec_fetch_site: &str) -> bool {
    matches!(sec_fetch_site.to_ascii_lowercase().as_str(), "same-origin" | "none")
}

/// True when `host` (a `Host` header: a name or address, and maybe a port) is
/// `localhost`, a name below it, an IP address, or one of `allowed`.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or("", |(name, _)| name),
        None => match host.rsplit_once(':') {
            Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
            _ => host,
        },
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<std::net::IpAddr>().is_ok()
        || allowed.contains(&name)
}

/// Headers every response gets: nothing is cached (pages change under the browser), and
/// types are not sniffed.
fn fresh(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn text(status: StatusCode, body: &'static str) -> Response {
    fresh((status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response())
}

async fn reload_script() -> Response {
    fresh(([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], RELOAD_JS).into_response())
}

async fn status(State(served): State<Arc<Served>>) -> Response {
    let status = served.status.borrow().clone();
    fresh(Json(&*status).into_response())
}

/// Server-Sent Events: the current `status` at once, then every status after it, in order
/// (each names the pages it changed, so none may be skipped). A page that fell too far
/// behind is sent the latest status as a change of every page: it reloads.
async fn events(State(served): State<Arc<Served>>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // Subscribed before the current status is read: a status sent in between comes twice,
    // which a page ignores the second time, rather than not at all.
    let later = BroadcastStream::new(served.events.subscribe());
    let current = served.status.borrow().clone();
    let latest = Arc::clone(&served);
    let stream = tokio_stream::once(current).chain(later.map(move |sent| match sent {
        Ok(status) => status,
        Err(BroadcastStreamRecvError::Lagged(_)) => {
            let latest = latest.status.borrow().clone();
            Arc::new(BuildStatus { changed: None, ..(*latest).clone() })
        }
    }));
    let stream = stream.map(|status| {
        let json = serde_json::to_string(&*status).unwrap_or_else(|_| "{}".into());
        Ok(Event::default().event("status").data(json))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The query string of `/api/search`: the filters of `casebook search`.
#[derive(Debug, Deserialize)]
struct SearchParams {
    q: Option<String>,
    system: Option<String>,
    run: Option<String>,
    kind: Option<String>,
    family: Option<String>,
    status: Option<String>,
    #[serde(rename = "type")]
    doc_type: Option<String>,
    limit: Option<usize>,
}

fn json_error(status: StatusCode, message: String) -> Response {
    fresh((status, Json(serde_json::json!({ "error": message }))).into_response())
}

async fn search(State(served): State<Arc<Served>>, params: Result<Query<SearchParams>, QueryRejection>) -> Response {
    let Query(params) = match params {
        Ok(params) => params,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, e.body_text()),
    };
    if let Some(t) = &params.doc_type {
        if !["record", "section", "report"].contains(&t.as_str()) {
            return json_error(StatusCode::BAD_REQUEST, format!("type must be record, section or report, not {t:?}"));
        }
    }
    let Some(searcher) = served.searcher() else {
        return json_error(StatusCode::SERVICE_UNAVAILABLE, "no search index yet: the site has not built".into());
    };
    let request = Request {
        query: params.q.unwrap_or_default(),
        system: params.system,
        run: params.run,
        kind: params.kind,
        family: params.family,
        status: params.status,
        doc_type: params.doc_type,
        limit: params.limit.unwrap_or(10).min(MAX_LIMIT),
    };
    // tantivy is synchronous: keep it off the threads that answer other requests.
    match tokio::task::spawn_blocking(move || searcher.search(&request)).await {
        Ok(Ok(results)) => fresh(Json(results).into_response()),
        Ok(Err(SearchError::Query(message))) => json_error(StatusCode::BAD_REQUEST, message),
        Ok(Err(e)) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(_) => json_error(StatusCode::INTERNAL_SERVER_ERROR, "the search failed".into()),
    }
}

/// A file of the output folder. The path is checked before anything is read; a path that
/// tries to leave the folder gets 400, one that finds nothing the site's 404 page.
async fn site_file(State(served): State<Arc<Served>>, method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "casebook serve answers GET and HEAD only\n");
    }
    let path = uri.path();
    let base = served.base_path();
    let Some(below_base) = path.strip_prefix(base.trim_end_matches('/')) else {
        return not_found(&served).await;
    };
    if below_base.is_empty() {
        // `/base` without its slash.
        return redirect(&base, uri.query());
    }
    if !below_base.starts_with('/') {
        return not_found(&served).await;
    }
    let relative = match files::relative_path(below_base) {
        Ok(relative) => relative,
        Err(_) => return text(StatusCode::BAD_REQUEST, "bad request path\n"),
    };
    match files::find(&served.output, &relative, below_base.ends_with('/')) {
        Found::File(file) => file_response(&served, &file, StatusCode::OK).await,
        // Leading slashes collapsed: `//host/` would send the browser to another site.
        Found::Folder => redirect(&format!("/{}/", path.trim_start_matches('/')), uri.query()),
        Found::Nothing => not_found(&served).await,
    }
}

fn redirect(location: &str, query: Option<&str>) -> Response {
    let target = match query {
        Some(q) => format!("{location}?{q}"),
        None => location.to_string(),
    };
    match HeaderValue::from_str(&target) {
        Ok(value) => fresh((StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, value)]).into_response()),
        Err(_) => text(StatusCode::BAD_REQUEST, "bad request path\n"),
    }
}

/// The site's 404.html with status 404, or a small page of the server's own.
async fn not_found(served: &Served) -> Response {
    if let Found::File(file) = files::find(&served.output, std::path::Path::new("404.html"), false) {
        return file_response(served, &file, StatusCode::NOT_FOUND).await;
    }
    let page = files::fallback_not_found(served.generation());
    fresh((StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response())
}

async fn file_response(served: &Served, file: &std::path::Path, status: StatusCode) -> Response {
    // Read before the file so that a build finishing in between makes the page reload
    // once more rather than never.
    let generation = served.generation();
    let bytes = match tokio::fs::read(file).await {
        Ok(bytes) => bytes,
        // Replaced by a build between finding and reading it.
        Err(_) => return text(StatusCode::NOT_FOUND, "not found\n"),
    };
    let content_type = files::content_type(file);
    let body = if files::is_html(file) {
        files::with_reload_script(&String::from_utf8_lossy(&bytes), generation).into_bytes()
    } else {
        bytes
    };
    fresh((status, [(header::CONTENT_TYPE, content_type)], body).into_response())
}

#[cfg(test)]
mod tests {
    use super::{host_allowed, own_fetch, same_origin};

    #[test]
    fn only_a_fetch_from_the_server_s_own_pages_or_the_reader_is_its_own() {
        assert!(own_fetch("same-origin") && own_fetch("none") && own_fetch("Same-Origin"));
        for other in ["same-site", "cross-site", "", "same-origin, cross-site"] {
            assert!(!own_fetch(other), "{other}");
        }
    }

    #[test]
    fn an_origin_is_the_same_only_when_it_names_the_host_asked() {
        let host = Some("localhost:1111");
        assert!(same_origin("http://localhost:1111", host));
        assert!(same_origin("http://LOCALHOST:1111", host));
        for origin in ["http://localhost:2222", "http://evil.example", "null", "localhost:1111", "file://"] {
            assert!(!same_origin(origin, host), "{origin}");
        }
        assert!(!same_origin("http://localhost:1111", None));
    }

    #[test]
    fn hosts_are_localhost_addresses_or_allowed_names() {
        let allowed = vec!["preview.test".to_string()];
        for host in [
            "localhost",
            "localhost:1111",
            "LOCALHOST.",
            "a.localhost:80",
            "127.0.0.1:1111",
            "[::1]:1111",
            "10.0.0.2",
            "preview.test:8080",
        ] {
            assert!(host_allowed(host, &allowed), "{host}");
        }
        for host in ["evil.example", "evil.example:1111", "localhost.evil.example", "127.0.0.1.nip.io", "", "[::1"] {
            assert!(!host_allowed(host, &allowed), "{host}");
        }
    }
}
