// A blocking retry is run with `.call()`: awaiting one names it.
use stagger::policy::Constant;

async fn run() {
    let _ = stagger::blocking::retry(Constant::new(), |_| Ok::<_, std::io::Error>(())).await;
}

fn main() {
    drop(run());
}
