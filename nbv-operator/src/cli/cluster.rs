//! The flags that choose a cluster, for the commands that talk to one: kubectl passes
//! none of its own flags to a plugin, so `kubectl nbv wait --context staging` works only
//! because `nbv wait` reads the flag itself, with kubectl's name and meaning.

use std::path::PathBuf;

use crate::runtime::client::ClientOptions;

/// `--kubeconfig` and `--context`, as kubectl has them.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct ClusterArgs {
    /// The kubeconfig file to use (default: the files `KUBECONFIG` names, else
    /// ~/.kube/config, else the Pod's service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl ClusterArgs {
    /// The client options that reach this cluster, the others as `base` has them.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::cli::cluster::ClusterArgs;
    /// use nbv_operator::runtime::client::ClientOptions;
    ///
    /// let args = ClusterArgs { kubeconfig: None, context: Some("staging".into()) };
    /// let options = args.client_options(ClientOptions::default());
    /// assert_eq!(options.context.as_deref(), Some("staging"));
    /// ```
    pub fn client_options(&self, base: ClientOptions) -> ClientOptions {
        ClientOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            ..base
        }
    }
}
