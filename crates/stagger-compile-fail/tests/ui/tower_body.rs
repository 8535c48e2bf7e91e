// The layer hands the inner service a `RetryBody<B>`, not the caller's body: a service that
// takes `Full<Bytes>` must take `RetryBody<Full<Bytes>>`, and the message names `RetryBody`.
use std::future::{Ready, ready};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use stagger::policy::Constant;
use stagger::tower::RetryLayer;
use tower_layer::Layer;
use tower_service::Service;

#[derive(Clone)]
struct Echo;

impl Service<Request<Full<Bytes>>> for Echo {
    type Response = Response<Full<Bytes>>;
    type Error = std::io::Error;
    type Future = Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Full<Bytes>>) -> Self::Future {
        ready(Ok(Response::new(request.into_body())))
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut service = RetryLayer::new(Constant::new())?
        .sleeper(tokio::time::sleep)
        .layer(Echo);
    let request = Request::new(Full::new(Bytes::from_static(b"hello")));
    let _response = service.call(request).await?;
    Ok(())
}

fn main() {
    drop(run());
}
