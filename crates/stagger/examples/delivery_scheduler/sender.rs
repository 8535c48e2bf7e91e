//! The HTTP side: one POST per attempt, with hyper's client.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{Client, connect::HttpConnector};
use hyper_util::rt::TokioExecutor;

use crate::store::Delivery;

/// How long one attempt may take, response body included.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// Posts payloads to their target URLs.
pub(crate) struct Sender {
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Sender {
    pub(crate) fn new() -> Self {
        Self {
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }

    /// Makes attempt number `attempt` of `delivery`: `Ok` for a 2xx answer, otherwise why not.
    ///
    /// The receiver gets the delivery id and attempt number as headers, so it can drop
    /// duplicates: a process killed after the POST but before recording it sends it again.
    pub(crate) async fn post(&self, delivery: &Delivery, attempt: u32) -> Result<(), String> {
        let request = hyper::Request::post(delivery.url.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header("x-delivery-id", delivery.id.as_str())
            .header("x-delivery-attempt", attempt)
            .body(Full::new(Bytes::from(delivery.payload.clone())))
            .map_err(|e| format!("bad request: {e}"))?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status();
            // Read the body so that the connection can be reused.
            response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(status)
        };
        match tokio::time::timeout(ATTEMPT_TIMEOUT, exchange).await {
            Err(_) => Err(format!("no answer within {ATTEMPT_TIMEOUT:?}")),
            Ok(Err(e)) => Err(e),
            Ok(Ok(status)) if status.is_success() => Ok(()),
            Ok(Ok(status)) => Err(format!("HTTP {status}")),
        }
    }
}
