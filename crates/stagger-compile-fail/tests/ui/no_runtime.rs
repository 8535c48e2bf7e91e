// stagger without the `tokio` feature has no default sleeper: the message names the feature
// and `.sleeper(...)`.
use stagger::policy::Constant;

async fn run() {
    let _ = stagger::retry(Constant::new(), |_| async { Ok::<_, std::io::Error>(()) }).await;
}

fn main() {
    drop(run());
}
