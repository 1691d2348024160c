//! Runs the example operator against the cluster of the current kubeconfig (or the
//! in-cluster service account).

#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    let client = kube::Client::try_default().await?;
    nbv_embed_example::run(nbv_embed_example::Context::new(client)).await;
    Ok(())
}
