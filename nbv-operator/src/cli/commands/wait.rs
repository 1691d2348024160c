//! `nbv wait`'s command line: chooses the cluster and the namespace as kubectl would,
//! then hands over to [`crate::wait`], which decides.

use std::time::Duration;

use crate::cli::cluster::ClusterArgs;
use crate::runtime::api_error::with_causes;
use crate::runtime::client::ClientOptions;

/// The exit code when no client can be built: the jobs cannot be read, as for a
/// refused request ([`crate::wait::WaitStatus::Unreadable`]).
const NO_CLIENT: u8 = crate::wait::WaitStatus::Unreadable.code();

/// Runs `nbv wait` on the cluster `cluster` chooses. Without `namespace`, the jobs are
/// those of the client's default namespace: the kubeconfig context's (`default` if
/// it names none), or the Pod's own when it runs in a cluster, as an Argo CD hook does.
pub async fn run(
    namespace: Option<String>,
    wave: i64,
    timeout: Option<Duration>,
    cluster: &ClusterArgs,
) -> u8 {
    let options = cluster.client_options(ClientOptions::default());
    let client = match crate::runtime::client::build(&options).await {
        Ok(client) => client,
        Err(error) => {
            eprintln!(
                "error: cannot build a Kubernetes client: {}; name a kubeconfig with \
                 --kubeconfig or KUBECONFIG, and one of its contexts with --context",
                with_causes(&error)
            );
            return NO_CLIENT;
        }
    };
    let args = crate::wait::WaitArgs {
        namespace: namespace.unwrap_or_else(|| client.default_namespace().to_owned()),
        wave,
        timeout,
    };
    crate::wait::wait(
        client,
        &args,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    )
    .await
}
