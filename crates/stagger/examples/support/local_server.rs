//! The local server the HTTP examples call: `/busy` answers 503 with `Retry-After: 1` once,
//! `/orders` answers 503 once per distinct body; then both succeed.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

/// A local server: `/busy` answers 503 with `Retry-After: 1` once, `/orders` answers 503
/// once per distinct body; then both succeed.
pub(crate) async fn serve() -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let busy = Arc::new(AtomicU32::new(0));
    let orders = Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (busy, orders) = (busy.clone(), orders.clone());
            let service = service_fn(move |request: Request<Incoming>| {
                let (busy, orders) = (busy.clone(), orders.clone());
                async move {
                    use http_body_util::BodyExt;
                    let path = request.uri().path().to_owned();
                    let body = request.into_body().collect().await.map(|b| b.to_bytes());
                    let response = match path.as_str() {
                        "/busy" if busy.fetch_add(1, Ordering::Relaxed) == 0 => {
                            Response::builder().status(503).header("retry-after", "1")
                        }
                        "/orders" => {
                            let first = orders.lock().unwrap().insert(body.unwrap_or_default());
                            Response::builder().status(if first { 503 } else { 201 })
                        }
                        _ => Response::builder().status(200),
                    };
                    Ok::<_, Infallible>(response.body(Full::<Bytes>::default()).unwrap())
                }
            });
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new();
                let _ = connection
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}
