use stagger::{Failure::*, http::classify_status, policy::ExponentialFullJitter};

async fn get(url: &str) -> Result<String, Box<dyn std::error::Error>> {
    let retry = stagger::retry(ExponentialFullJitter::new(), |_| reqwest::get(url))
        .timeout(std::time::Duration::from_secs(10))
        .classify(|e| if e.is_builder() { Permanent } else { Retryable })
        .classify_ok(|r| classify_status(r.status(), r.headers(), std::time::SystemTime::now()));
    Ok(retry.await?.text().await?)
}

#[tokio::main]
async fn main() {
    println!("{:?}", get("http://localhost:8080/").await);
}
