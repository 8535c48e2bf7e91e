// reqwest's errors do not say whether they are worth retrying: the message names `.classify(`.
use stagger::policy::Constant;

async fn run(client: reqwest::Client) {
    let _ = stagger::retry(Constant::new(), |_| client.get("http://localhost/").send())
        .sleeper(tokio::time::sleep)
        .await;
}

fn main() {
    drop(run(reqwest::Client::new()));
}
