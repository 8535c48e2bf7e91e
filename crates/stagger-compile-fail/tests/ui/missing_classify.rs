// An error type that does not classify itself needs `.classify(...)`: the message names it.
use stagger::policy::Constant;

struct MyError;

async fn run() {
    let _ = stagger::retry(Constant::new(), |_| async { Err::<(), _>(MyError) })
        .sleeper(tokio::time::sleep)
        .await;
}

fn main() {
    drop(run());
}
