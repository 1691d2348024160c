//! Who may read `/metrics`: the API server decides, as for kube-rbac-proxy and
//! controller-runtime's secure metrics. The bearer token of the request is reviewed
//! (`TokenReview`), and the user it names must be allowed `get` on the non-resource
//! URL `/metrics` (`SubjectAccessReview`): the ClusterRole `nbv-metrics-reader` grants
//! it. The answers are kept for a short while, so a scrape every few seconds costs no
//! two reviews a minute.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

/// How long an answer is kept: an allowed token for a minute, a refused one for ten
/// seconds (a binding just created works soon).
const ALLOWED_FOR: Duration = Duration::from_secs(60);
const REFUSED_FOR: Duration = Duration::from_secs(10);
/// At most this many tokens are remembered; beyond, the oldest answers are dropped.
const REMEMBERED: usize = 256;

/// The path and verb a scraper must be allowed.
const PATH: &str = "/metrics";
const VERB: &str = "get";

/// What the API server said of a request's token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The token's user may read the metrics.
    Allowed,
    /// No bearer token, or one the API server does not know: `401`.
    Unauthenticated,
    /// A known user who may not read the metrics: `403`.
    Forbidden(String),
    /// The reviews themselves failed (nbv's role lacks them, the API server is down):
    /// `503`, so that the scraper tries again.
    Unavailable(String),
}

/// The reviews, with their answers kept for a while.
pub struct Access {
    client: kube::Client,
    kept: Mutex<HashMap<String, (Verdict, Instant)>>,
}

impl Access {
    /// Reviews through `client` (nbv's own: its role may create TokenReviews and
    /// SubjectAccessReviews).
    pub fn new(client: kube::Client) -> Self {
        Access {
            client,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// The verdict on a request with this `Authorization` header.
    pub async fn check(&self, authorization: Option<&http::HeaderValue>) -> Verdict {
        let Some(token) = bearer(authorization) else {
            return Verdict::Unauthenticated;
        };
        if let Some(verdict) = self.kept(token) {
            return verdict;
        }
        let verdict = self.review(token).await;
        self.keep(token, &verdict);
        verdict
    }

    fn kept(&self, token: &str) -> Option<Verdict> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let (verdict, until) = kept.get(token)?;
        (Instant::now() < *until).then(|| verdict.clone())
    }

    fn keep(&self, token: &str, verdict: &Verdict) {
        let lasts = match verdict {
            Verdict::Allowed => ALLOWED_FOR,
            Verdict::Unauthenticated | Verdict::Forbidden(_) => REFUSED_FOR,
            // A failure of the API server is not an answer about the token.
            Verdict::Unavailable(_) => return,
        };
        let now = Instant::now();
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|_, (_, until)| *until > now);
        if kept.len() >= REMEMBERED
            && let Some(oldest) = kept
                .iter()
                .min_by_key(|(_, (_, until))| *until)
                .map(|(token, _)| token.clone())
        {
            kept.remove(&oldest);
        }
        kept.insert(token.to_owned(), (verdict.clone(), now + lasts));
    }

    async fn review(&self, token: &str) -> Verdict {
        let reviews: Api<TokenReview> = Api::all(self.client.clone());
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_owned(),
                ..Default::default()
            },
            ..Default::default()
        };
        let reviewed = match reviews.create(&PostParams::default(), &review).await {
            Ok(reviewed) => reviewed,
            Err(error) => return Verdict::Unavailable(format!("TokenReview failed: {error}")),
        };
        let status = reviewed.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(user)) => user,
            _ => return Verdict::Unauthenticated,
        };
        let name = user.username.clone().unwrap_or_default();
        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username,
                uid: user.uid,
                groups: user.groups,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(PATH.to_owned()),
                    verb: Some(VERB.to_owned()),
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let accesses: Api<SubjectAccessReview> = Api::all(self.client.clone());
        match accesses.create(&PostParams::default(), &access).await {
            Ok(reviewed) if reviewed.status.as_ref().is_some_and(|s| s.allowed) => Verdict::Allowed,
            Ok(_) => Verdict::Forbidden(format!(
                "{name} may not get {PATH}; bind the ClusterRole nbv-metrics-reader to it"
            )),
            Err(error) => Verdict::Unavailable(format!("SubjectAccessReview failed: {error}")),
        }
    }
}

/// The token of `Authorization: Bearer TOKEN`, if that is what the header holds.
fn bearer(authorization: Option<&http::HeaderValue>) -> Option<&str> {
    let value = authorization?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::bearer;

    #[test]
    fn only_a_bearer_token_is_a_token() {
        let header = |v: &str| http::HeaderValue::from_str(v).unwrap();
        assert_eq!(bearer(Some(&header("Bearer abc"))), Some("abc"));
        assert_eq!(bearer(Some(&header("bearer  abc "))), Some("abc"));
        assert_eq!(bearer(Some(&header("Basic YWJj"))), None);
        assert_eq!(bearer(Some(&header("Bearer "))), None);
        assert_eq!(bearer(None), None);
    }
}
